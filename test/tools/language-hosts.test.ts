import { ChildProcess, execFile, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { promisify } from "node:util";
import * as grpc from "@grpc/grpc-js";
import { ensureToolchain } from "../../cli/toolchain";
import { REPO_ROOT } from "../helpers/paths";
import { TestStack } from "../helpers/pulumi-stack";
import { UserProgram } from "../helpers/user-program";
import { PROJECT, TYPESCRIPT_PROGRAM } from "../package/own-program";

const run = promisify(execFile);
const languageGrpc = require("@pulumi/pulumi/proto/language_grpc_pb");
const languagePb = require("@pulumi/pulumi/proto/language_pb");
const emptyPb = require("google-protobuf/google/protobuf/empty_pb");

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

function call<T>(client: any, method: string, request: any, read: (response: any) => T): Promise<T> {
  return new Promise((resolve, reject) => client[method](request, (error: Error | null, response: any) => (error ? reject(error) : resolve(read(response)))));
}

function requiredPackages(client: any, programDir: string): Promise<{ kind: string; name: string; version: string }[]> {
  const info = new languagePb.ProgramInfo();
  info.setRootDirectory(programDir);
  info.setProgramDirectory(programDir);
  info.setEntryPoint(".");
  const request = new languagePb.GetRequiredPackagesRequest();
  request.setInfo(info);
  return call(client, "getRequiredPackages", request, (response) =>
    response.getPackagesList().map((p: any) => ({ kind: p.getKind(), name: p.getName(), version: p.getVersion() })),
  );
}

/** A program that uses gpu-rental and another Pulumi package, @pulumi/command, whose plugin it declares. */
const PROGRAM = `const { local } = require("@pulumi/command");
const { Instance } = require("gpu-rental/provider");
const worker = new Instance("worker", { gpuModel: "RTX 3090", image: "nvidia/cuda:12.4.1-runtime-ubuntu22.04" });
new local.Command("announce", { create: "echo rented" });
`;

describe("gpu-rental's language host (the toolchain's pulumi-language-nodejs, -python and -go)", () => {
  let program: UserProgram;
  beforeAll(async () => {
    // Declared as examples/post-boot declares its packages: one install serves both.
    const packages = ["gpu-rental", "@pulumi/pulumi@3.248.0", "@pulumi/command@1.2.1"];
    program = await UserProgram.create("plugins", { "Pulumi.yaml": PROJECT("plugins", false), "index.js": PROGRAM }, packages, TYPESCRIPT_PROGRAM.dev);
  }, 300_000);
  afterAll(() => program.remove());

  it("reports, over gRPC, the plugin that an installed npm package declares (@pulumi/command: command v1.2.1), and its own version", async () => {
    const { client, child } = await startHost(path.join(ensureToolchain().bin, "pulumi-language-nodejs"));
    try {
      expect(await requiredPackages(client, program.dir)).toEqual([{ kind: "resource", name: "command", version: "v1.2.1" }]);
      expect(await call(client, "getPluginInfo", new emptyPb.Empty(), (info) => info.getVersion())).toBe("3.248.0");
    } finally {
      client.close();
      child.kill();
    }
  });

  it("started under another name, says which names it serves", async () => {
    const copy = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "gpu-rental-host-")), "pulumi-language-dotnet");
    fs.copyFileSync(path.join(ensureToolchain().bin, "pulumi-language-nodejs"), copy);
    fs.chmodSync(copy, 0o755);
    try {
      const result = await run(copy, []).catch((error) => error);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/link this binary as pulumi-language-nodejs, pulumi-language-python or pulumi-language-go/);
    } finally {
      fs.rmSync(path.dirname(copy), { recursive: true, force: true });
    }
  });
});

/** A project of `files` in a folder of its own, previewed by the engine: its output, for the error it must show. */
async function previewOf(name: string, files: Record<string, string>): Promise<{ code: number; output: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `gpu-rental-${name}-`));
  for (const [file, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, file), text);
  const stack = new TestStack(name, {}, dir);
  try {
    await stack.init({}, {});
    const result = await stack.run("preview");
    return { code: result.code, output: `${result.stdout}\n${result.stderr}` };
  } finally {
    await stack.remove();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe("bad programs get an error that says what to do", () => {
  it.concurrent("a Python program without a virtual environment: run `pulumi install`", async () => {
    const { code, output } = await previewOf("no-venv", { "Pulumi.yaml": "name: no-venv\nruntime: python\n", "__main__.py": "import pulumi\n" });
    expect(code).not.toBe(0);
    expect(output).toMatch(/the Python program in \S+ has no virtual environment at \S+venv: run `pulumi install` there/);
  });

  it.concurrent("a Go program that does not build: the compiler's error, then what to do", async () => {
    const files = {
      "Pulumi.yaml": "name: no-build\nruntime: go\n",
      "go.mod": "module example.com/no-build\n\ngo 1.25\n",
      "main.go": 'package main\n\nfunc main() {\n\tvar count int = "three"\n\t_ = count\n}\n',
    };
    const { code, output } = await previewOf("no-build", files);
    expect(code).not.toBe(0);
    expect(output).toMatch(/main\.go:4:\d+: cannot use "three"/);
    expect(output).toMatch(/the Go program in \S+ does not build \(go build's errors are above\): fix them/);
  });

  it("a program whose runtime has no host here: `gpu-rental test` names the runtimes it has and where to get others", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gpu-rental-dotnet-"));
    fs.writeFileSync(path.join(dir, "Pulumi.yaml"), "name: dotnet-program\nruntime: dotnet\n");
    try {
      const result = await run(process.execPath, [path.join(REPO_ROOT, "bin", "gpu-rental.js"), "test"], { cwd: dir }).catch((error) => error);
      expect(result.code).not.toBe(0);
      expect(`${result.stdout}${result.stderr}`).toMatch(/runtime is "dotnet", which has no language host here: gpu-rental's toolchain provides nodejs, python, go, yaml\. For dotnet, install Pulumi with its dotnet language host/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
