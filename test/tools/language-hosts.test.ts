import { ChildProcess, spawn } from "node:child_process";
import * as path from "node:path";
import * as grpc from "@grpc/grpc-js";
import { ensureToolchain } from "../../cli/toolchain";
import { Clock } from "../../emulator";
import { emulator } from "../helpers/emulator";
import { TestStack } from "../helpers/pulumi-stack";
import { UserProgram } from "../helpers/user-program";
import { PROJECT, TYPESCRIPT_PROGRAM } from "../package/own-program";

const languageGrpc = require("@pulumi/pulumi/proto/language_grpc_pb");
const languagePb = require("@pulumi/pulumi/proto/language_pb");

/** A language host started as the engine starts one (its port on the first line), driven over gRPC. */
async function startHost(binary: string): Promise<{ client: any; child: ChildProcess }> {
  const child = spawn(binary, [], { stdio: ["ignore", "pipe", "pipe"] });
  const port = await new Promise<number>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (chunk) => {
      out += chunk;
      if (out.includes("\n")) resolve(Number(out.split("\n")[0]));
    });
    child.on("exit", (code) => reject(new Error(`${binary} exited ${code}`)));
  });
  return { client: new languageGrpc.LanguageRuntimeClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure()), child };
}

function requiredPackages(client: any, programDir: string): Promise<{ kind: string; name: string; version: string }[]> {
  const info = new languagePb.ProgramInfo();
  info.setRootDirectory(programDir);
  info.setProgramDirectory(programDir);
  info.setEntryPoint(".");
  const request = new languagePb.GetRequiredPackagesRequest();
  request.setInfo(info);
  return new Promise((resolve, reject) =>
    client.getRequiredPackages(request, (error: Error | null, response: any) =>
      error ? reject(error) : resolve(response.getPackagesList().map((p: any) => ({ kind: p.getKind(), name: p.getName(), version: p.getVersion() }))),
    ),
  );
}

/** A program that uses gpu-rental and another Pulumi package, @pulumi/command, whose plugin the engine must load. */
const PROGRAM = `const pulumi = require("@pulumi/pulumi");
const { local } = require("@pulumi/command");
const { Instance } = require("gpu-rental/provider");

const worker = new Instance("worker", { gpuModel: "RTX 3090", image: "nvidia/cuda:12.4.1-runtime-ubuntu22.04" });
const announce = new local.Command("announce", { create: pulumi.interpolate\`echo rented \${worker.instanceId}\` });
exports.instanceId = worker.instanceId;
exports.announced = announce.stdout;
`;

describe("plugin packages of a program", () => {
  let program: UserProgram;
  beforeAll(async () => {
    // Declared as examples/post-boot declares its packages: one install serves both.
    const packages = ["gpu-rental", "@pulumi/pulumi@3.248.0", "@pulumi/command@1.2.1"];
    program = await UserProgram.create("plugins", { "Pulumi.yaml": PROJECT("plugins", false), "index.js": PROGRAM }, packages, TYPESCRIPT_PROGRAM.dev);
  }, 300_000);
  afterAll(() => program.remove());

  it("Pulumi's official Node.js host (the toolchain's) reports the plugin that @pulumi/command declares, over gRPC", async () => {
    const { client, child } = await startHost(path.join(ensureToolchain().bin, "pulumi-language-nodejs"));
    try {
      expect(await requiredPackages(client, program.dir)).toEqual([{ kind: "resource", name: "command", version: "v1.2.1" }]);
    } finally {
      client.close();
      child.kill();
    }
  }, 300_000);

  it("deploys through the engine, the command plugin loaded beside gpu-rental's resources", async () => {
    const emu = await emulator({ clock: new Clock("running"), lifecycle: { provisioningMs: 50, loadingMs: 100 } });
    const stack = new TestStack(`plugins-${process.pid}`, {}, program.dir);
    try {
      await stack.init({ "gpu-rental:apiUrl": emu.url }, { "gpu-rental:apiKey": emu.apiKey });
      expect(await stack.ok("up", "--yes")).toMatch(/\+ 3 created/);
      const outputs = await stack.outputs();
      expect(outputs.announced).toBe(`rented ${outputs.instanceId}`);
      await stack.ok("destroy", "--yes");
      expect(emu.marketplace.instances.all()).toHaveLength(0);
    } finally {
      await stack.dispose();
      await emu.close();
    }
  }, 300_000);
});
