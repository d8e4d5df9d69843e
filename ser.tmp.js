const pulumi = require("@pulumi/pulumi");
const { PROVIDER } = require("./dist/provider/sdk-provider.js");
const n0 = Object.keys(require.cache).length;
const t = process.cpuUsage(); const w = Date.now();
pulumi.runtime.serializeFunction(() => PROVIDER, { allowSecrets: true }).then((sf) => {
  const u = process.cpuUsage(t);
  console.log("serialize:", ((u.user + u.system) / 1000).toFixed(0), "ms CPU,", Date.now() - w, "ms wall;", Object.keys(require.cache).length - n0, "modules loaded;", sf.text.length, "chars");
  if (process.argv[2]) console.log(sf.text);
});
