"""The deployment's code: imported as the package `deployment` on each worker, which serves its remote functions.

The service's worker program runs this with `IS_DEPLOYMENT` set: `Deployment` is then the serving one, and
`@app.remote` registers `square` at `/remote/square`. One function declares a benchmark (the worker program runs it
before it reports itself ready, and refuses to start without one).
"""
from vastai.serverless.remote import Deployment

# The name is the Deployment resource's `name`: the worker looks the deployment up by it.
app = Deployment(name="square")


@app.remote(benchmark_dataset=[{"x": 3}])
async def square(x):
    return x * x
