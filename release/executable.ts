import { RELAY_ARGUMENT } from "../emulator/sandbox/relay";

/**
 * The release's executable (./archives.ts): the provider plugin, as the engine runs it, and the `gpu-rental` command
 * when its first argument is `gpu-rental` (`pulumi-resource-gpu-rental gpu-rental test ...`, as the Python SDK's
 * console script runs it), for teams with no Node.js. The engine never passes that word: it passes its flags and
 * its address. Each side is loaded only when it runs, so the plugin's start pays nothing for the command.
 */
const COMMAND_ARGUMENT = "gpu-rental";

if (process.argv[2] === COMMAND_ARGUMENT) require("../cli/index").run(process.argv.slice(3));
// The emulator's machines' own networks are each relayed by a process of it (emulator/sandbox/relay.ts).
else if (process.argv[2] === RELAY_ARGUMENT) require("../emulator/sandbox/relay").runRelay(process.argv.slice(3));
else void require("../provider/plugin/main").main();
