// The entry of the gpu-rental provider plugin: the compiled provider of the package this folder ships in.
// @pulumi/pulumi is resolved from here upwards (the program's or the plugin install's node_modules).
// The code cache first (dist/provider/code-cache.js): the plugin's modules compile from V8's cached code, some
// 0.14 CPU-s less of every start (the engine starts the plugin for every preview, up, refresh and destroy).
require("../dist/provider/code-cache.js");
require("../dist/provider/plugin/main.js").main();
