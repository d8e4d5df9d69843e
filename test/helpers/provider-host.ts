import { ChildProcess, spawn } from "node:child_process";
import * as path from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as pulumi from "@pulumi/pulumi";
import { REPO_ROOT } from "./paths";

const providerGrpc = require("@pulumi/pulumi/proto/provider_grpc_pb");
const providerPb = require("@pulumi/pulumi/proto/provider_pb");
const { Struct } = require("google-protobuf/google/protobuf/struct_pb");

type Props = Record<string, unknown>;

/**
 * The plugins that can serve dynamic providers: the one the toolchain installs (provider/dynamic-host.ts, built),
 * and @pulumi/pulumi's own (`cmd/dynamic-provider`), which a user's own Pulumi installation runs.
 */
export const DYNAMIC_HOSTS = {
  "gpu-rental": () => path.join(REPO_ROOT, "dist", "provider", "dynamic-host.js"),
  "@pulumi/pulumi": (cwd: string) => require.resolve("@pulumi/pulumi/cmd/dynamic-provider", { paths: [cwd] }),
};
export type DynamicHost = keyof typeof DYNAMIC_HOSTS;

/**
 * A dynamic-provider host, started as the engine starts it (in the program's folder, the engine's address as its
 * argument), and driven over gRPC with Pulumi's own generated clients. The provider goes in as a program stores
 * it in `__provider`: gpu-rental's module text (PROVIDER_MODULE) as its resource classes register it, or another
 * provider object serialized as pulumi.dynamic.Resource does, so loading faults show up here.
 */
export class ProviderHost {
  private constructor(
    private readonly child: ChildProcess,
    private readonly client: any,
    readonly serializedProvider: string,
    /** The URN of the resource driven, as a program's registration gives it (`__urn`: its kind, its creations' tokens). */
    readonly urn: string,
  ) {}

  /** A host (by default the toolchain's) serving `provider` (a module's text, or an object to serialize) for resources of `kind`. */
  static async start(provider: string | object, kind = "Instance", cwd = REPO_ROOT, host: DynamicHost = "gpu-rental", env: NodeJS.ProcessEnv = process.env): Promise<ProviderHost> {
    const serialized = typeof provider === "string" ? provider : (await pulumi.runtime.serializeFunction(() => provider, { allowSecrets: true })).text;
    const child = spawn(process.execPath, [DYNAMIC_HOSTS[host](cwd), "127.0.0.1:1"], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr!.on("data", (d) => (stderr += d));
    const port = await new Promise<number>((resolve, reject) => {
      let out = "";
      child.stdout!.on("data", (d) => {
        out += d;
        const line = out.split("\n")[0];
        if (out.includes("\n")) resolve(Number(line.trim()));
      });
      child.on("exit", (code) => reject(new Error(`provider host exited ${code}: ${stderr}`)));
    });
    const client = new providerGrpc.ResourceProviderClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    return new ProviderHost(child, client, serialized, `urn:pulumi:test::test::pulumi-nodejs:dynamic/gpu-rental:${kind}::x`);
  }

  /** A call as it went: the answer as an object, or the gRPC error's code, message and details. */
  async answerOf(method: string, request: unknown): Promise<{ answer?: unknown; error?: { code: number; details: string; initFailure?: unknown } }> {
    try {
      const answer: any = await this.call(method, request);
      return { answer: answer.toObject() };
    } catch (error: any) {
      const [bin] = error.metadata?.get("grpc-status-details-bin") ?? [];
      const initFailure = bin && require("@pulumi/pulumi/proto/status_pb").Status.deserializeBinary(bin).getDetailsList().map((d: any) => providerPb.ErrorResourceInitFailed.deserializeBinary(d.getValue()).toObject());
      return { error: { code: error.code, details: error.details, initFailure } };
    }
  }

  /** The request of `method` (Pulumi's message of that name) with its fields set, `__provider` and `__urn` added to its properties. */
  request(method: string, fields: Record<string, unknown>): unknown {
    const Message = providerPb[`${method[0].toUpperCase()}${method.slice(1)}Request`] ?? require("google-protobuf/google/protobuf/empty_pb").Empty;
    const req = new Message();
    for (const [field, value] of Object.entries(fields)) {
      const setter = `set${field[0].toUpperCase()}${field.slice(1)}`;
      req[setter](value && typeof value === "object" && !Array.isArray(value) ? this.struct(value as Props) : value);
    }
    return req;
  }

  private call<T>(method: string, request: unknown): Promise<T> {
    return new Promise((resolve, reject) =>
      this.client[method](request, (error: Error | null, response: T) => (error ? reject(error) : resolve(response))),
    );
  }

  private struct(props: Props) {
    return Struct.fromJavaScript({ __urn: this.urn, __provider: this.serializedProvider, ...props });
  }

  async configure(config: Record<string, string>): Promise<void> {
    const req = new providerPb.ConfigureRequest();
    req.setArgs(Struct.fromJavaScript(config));
    await this.call("configure", req);
  }

  async check(olds: Props, news: Props): Promise<{ inputs: Props; failures: { property: string; reason: string }[] }> {
    const req = new providerPb.CheckRequest();
    req.setUrn(this.urn);
    req.setOlds(this.struct(olds));
    req.setNews(this.struct(news));
    const res: any = await this.call("check", req);
    return {
      inputs: res.getInputs().toJavaScript(),
      failures: res.getFailuresList().map((f: any) => ({ property: f.getProperty(), reason: f.getReason() })),
    };
  }

  async diff(id: string, olds: Props, news: Props): Promise<{ changes: number; replaces: string[]; deleteBeforeReplace: boolean }> {
    const req = new providerPb.DiffRequest();
    req.setId(id);
    req.setOlds(this.struct(olds));
    req.setNews(this.struct(news));
    const res: any = await this.call("diff", req);
    return { changes: res.getChanges(), replaces: res.getReplacesList(), deleteBeforeReplace: res.getDeletebeforereplace() };
  }

  async create(props: Props): Promise<{ id: string; outs: Props }> {
    const req = new providerPb.CreateRequest();
    req.setUrn(this.urn);
    req.setProperties(this.struct(props));
    const res: any = await this.call("create", req);
    return { id: res.getId(), outs: res.getProperties().toJavaScript() };
  }

  async read(id: string, props: Props): Promise<{ id: string; props: Props }> {
    const req = new providerPb.ReadRequest();
    req.setId(id);
    req.setProperties(this.struct(props));
    const res: any = await this.call("read", req);
    return { id: res.getId(), props: res.getProperties()?.toJavaScript() ?? {} };
  }

  async update(id: string, olds: Props, news: Props): Promise<Props> {
    const req = new providerPb.UpdateRequest();
    req.setId(id);
    req.setOlds(this.struct(olds));
    req.setNews(this.struct(news));
    const res: any = await this.call("update", req);
    return res.getProperties().toJavaScript();
  }

  async delete(id: string, props: Props): Promise<void> {
    const req = new providerPb.DeleteRequest();
    req.setId(id);
    req.setProperties(this.struct(props));
    await this.call("delete", req);
  }

  stop(): void {
    this.client.close();
    this.child.kill();
  }
}
