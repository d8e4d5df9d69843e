import { createRequire } from "node:module";
import { patchProviderServer } from "../../provider/plugin/engine-patches";

/** The plugin's patches of @pulumi/pulumi's provider server look for what they patch, and stop loudly without it. */
it("refuses to serve, naming the @pulumi/pulumi version, when what the patches replace is not there", () => {
  const fromPulumi = createRequire(require.resolve("@pulumi/pulumi"));
  const { ConfigureResponse } = fromPulumi("./proto/provider_pb");
  const setAcceptoutputs = ConfigureResponse.prototype.setAcceptoutputs;
  delete ConfigureResponse.prototype.setAcceptoutputs;
  try {
    expect(() => patchProviderServer(() => undefined)).toThrow(
      `gpu-rental's provider plugin cannot serve with @pulumi/pulumi ${fromPulumi("./version").version}: its provider server lacks ConfigureResponse.prototype.setAcceptoutputs`,
    );
  } finally {
    ConfigureResponse.prototype.setAcceptoutputs = setAcceptoutputs;
  }
});
