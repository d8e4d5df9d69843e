// The entry of the gpu-rental provider plugin: the compiled provider of the package this folder ships in.
// @pulumi/pulumi is resolved from here upwards (the program's or the plugin install's node_modules).
require("../dist/provider/plugin/main.js").main();
