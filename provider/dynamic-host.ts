/**
 * The engine's plugin for dynamic providers (`pulumi-resource-pulumi-nodejs`), as the toolchain installs it: a
 * gRPC server that loads each resource's provider from its `__provider` input (the provider object's serialized
 * module) and calls its methods. @pulumi/pulumi's own plugin loads the whole SDK (some 770 modules, half a second
 * of CPU) before it serves; this one loads the server, the protocol's messages and the providers it is given,
 * nothing else, so every `preview`, `up`, `refresh` and `destroy` of a TypeScript program starts its provider
 * sooner. Providers see what they see under Pulumi's plugin: the same calls, arguments and answers.
 *
 * It is copied alone into the toolchain's folder (tools/pulumi-toolchain.sh), so it imports nothing of gpu-rental:
 * gRPC and the protocol's messages come from the program's own @pulumi/pulumi, found from its folder (the
 * plugin's working directory).
 */
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";
import type * as grpc from "@grpc/grpc-js";

/** The key of the serialized provider in every dynamic resource's inputs and outputs. */
const PROVIDER = "__provider";
/** What the engine sends for a value not known yet (a preview of an input computed from another resource). */
const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
/** The signature of a secret wrapped as an object (`{4dabf18193072939515e22adb298388d: SECRET, value}`). */
const SIGNATURE = "4dabf18193072939515e22adb298388d";
const SECRET = "1b47061264138c4ac30d75fd1eb44270";
/**
 * The server's limits, as the SDK's own servers have them: messages as large as a program's whole state, and a
 * request may wait half an hour in a busy host's queue (a fleet's creations), not gRPC's 30 s.
 */
const SERVER_OPTIONS = { "grpc.max_receive_message_length": 400 * 1024 * 1024, "grpc.server_max_unrequested_time_in_server": 30 * 60 };
/**
 * A creation or update that fails is the resource's failure, which the engine reports in the provider's words;
 * any other method that fails is the provider's fault, shown with its stack too.
 */
const failsTheResource = (method: string) => method === "create" || method === "update";

type Props = Record<string, any>;
type Provider = Record<string, ((...args: any[]) => any) | undefined>;

/** The modules this host needs, from the program's own @pulumi/pulumi and its dependencies. */
function programModules() {
  let manifest: string;
  try {
    manifest = createRequire(path.join(process.cwd(), "program.js")).resolve("@pulumi/pulumi/package.json");
  } catch {
    throw new Error(`@pulumi/pulumi is not installed in ${process.cwd()}: run npm install (or pulumi install) there`);
  }
  const fromPulumi = createRequire(manifest);
  return {
    version: JSON.parse(fs.readFileSync(manifest, "utf8")).version as string,
    grpc: fromPulumi("@grpc/grpc-js") as typeof grpc,
    services: fromPulumi("./proto/provider_grpc_pb"),
    messages: fromPulumi("./proto/provider_pb"),
    plugin: fromPulumi("./proto/plugin_pb"),
    status: fromPulumi("./proto/status_pb"),
    Struct: fromPulumi("google-protobuf/google/protobuf/struct_pb").Struct,
    Empty: fromPulumi("google-protobuf/google/protobuf/empty_pb").Empty,
    Any: fromPulumi("google-protobuf/google/protobuf/any_pb").Any,
    moduleFromText: fromPulumi("require-from-string") as (text: string) => { handler: () => Provider },
  };
}
type Modules = ReturnType<typeof programModules>;

/**
 * The stack's configuration as a provider's `configure` receives it (`req.config`): `get` and `require` of a key,
 * a key without a namespace being the project's. Values are the Configure call's, secrets unwrapped.
 */
function stackConfig(values: Record<string, unknown>, project: string) {
  const get = (key: string): unknown => values[key.includes(":") ? key : `${project}:${key}`];
  return {
    get,
    require(key: string): unknown {
      if (get(key) === undefined) throw new Error(`the stack's configuration has no ${key}: set it with pulumi config set ${key} <value>`);
      return get(key);
    },
  };
}

/** The providers of one host: each serialized text loaded and configured once, however many resources share it. */
class Providers {
  private readonly loaded = new Map<string, Promise<Provider>>();
  private config: Record<string, unknown> = {};

  constructor(private readonly modules: Modules) {}

  /** The stack's configuration (Configure), secrets unwrapped: providers take plain values. */
  configure(args: Props): void {
    const plain = (value: any) => (value && value[SIGNATURE] === SECRET ? value.value : value);
    this.config = Object.fromEntries(Object.entries(args).filter(([key]) => key !== PROVIDER).map(([key, value]) => [key, plain(value)]));
  }

  /** The provider of a resource: its new inputs' provider, or its old one while the new one is not known yet. */
  of(news: Props, olds: Props = {}): Promise<Provider> {
    const text = news[PROVIDER] === UNKNOWN ? olds[PROVIDER] : news[PROVIDER];
    let provider = this.loaded.get(text);
    if (!provider) {
      provider = this.load(text);
      this.loaded.set(text, provider);
    }
    return provider;
  }

  private async load(text: string): Promise<Provider> {
    const provider = this.modules.moduleFromText(text).handler();
    const project = process.env.PULUMI_NODEJS_PROJECT || "project";
    if (provider.configure) await provider.configure({ config: stackConfig(this.config, project) });
    return provider;
  }
}

/** Outputs (or inputs) with the resource's provider kept in them, for the operations that follow. */
const keepingProvider = (values: Props | undefined, from: Props): Props => ({ ...(values ?? {}), [PROVIDER]: from[PROVIDER] });

/**
 * The service's methods, each from the request to its answer. A method not here is answered UNIMPLEMENTED by
 * gRPC itself (schema, invoke, construct, handshake...), as a dynamic provider has none of them.
 */
function methods(m: Modules, providers: Providers) {
  const props = (struct: any): Props => (struct ? struct.toJavaScript() : {});
  const struct = (values: Props) => m.Struct.fromJavaScript(values);
  const { DiffChanges } = m.messages.DiffResponse;
  return {
    getPluginInfo: async () => {
      const info = new m.plugin.PluginInfo();
      info.setVersion(m.version);
      return info;
    },
    configure: async (req: any) => {
      providers.configure(props(req.getArgs()));
      const answer = new m.messages.ConfigureResponse();
      answer.setAcceptsecrets(false);
      return answer;
    },
    cancel: async () => new m.Empty(),
    check: async (req: any) => {
      const [olds, news] = [props(req.getOlds()), props(req.getNews())];
      const provider = await providers.of(news, olds);
      const checked = provider.check ? await provider.check(olds, news) : {};
      const answer = new m.messages.CheckResponse();
      answer.setInputs(struct(keepingProvider(checked.inputs ?? news, news)));
      answer.setFailuresList(
        (checked.failures ?? []).map((failure: { property: string; reason: string }) => {
          const entry = new m.messages.CheckFailure();
          entry.setProperty(failure.property);
          entry.setReason(failure.reason);
          return entry;
        }),
      );
      return answer;
    },
    diff: async (req: any) => {
      const [olds, news] = [props(req.getOlds()), props(req.getNews())];
      const provider = await providers.of(news, olds);
      const answer = new m.messages.DiffResponse();
      if (!provider.diff) return answer;
      const diff = await provider.diff(req.getId(), olds, news);
      answer.setChanges(diff.changes === true ? DiffChanges.DIFF_SOME : diff.changes === false ? DiffChanges.DIFF_NONE : DiffChanges.DIFF_UNKNOWN);
      if (diff.replaces?.length) answer.setReplacesList(diff.replaces);
      if (diff.deleteBeforeReplace) answer.setDeletebeforereplace(true);
      return answer;
    },
    create: async (req: any) => {
      const inputs = props(req.getProperties());
      const made = await (await providers.of(inputs)).create!(inputs);
      const answer = new m.messages.CreateResponse();
      answer.setId(made.id);
      answer.setProperties(struct(keepingProvider(made.outs, inputs)));
      return answer;
    },
    read: async (req: any) => {
      const state = props(req.getProperties());
      const provider = await providers.of(state);
      const answer = new m.messages.ReadResponse();
      if (!provider.read) {
        // Nothing to ask: the state stays as it is.
        answer.setId(req.getId());
        answer.setProperties(req.getProperties());
        return answer;
      }
      const found = await provider.read(req.getId(), state);
      // No id: the thing is gone, and the engine drops it.
      answer.setId(found.id ?? "");
      answer.setProperties(struct(keepingProvider(found.props, state)));
      if (found.inputs) answer.setInputs(struct(keepingProvider(found.inputs, state)));
      return answer;
    },
    update: async (req: any) => {
      const [olds, news] = [props(req.getOlds()), props(req.getNews())];
      const provider = await providers.of(news);
      const updated = (provider.update && (await provider.update(req.getId(), olds, news))) || {};
      const answer = new m.messages.UpdateResponse();
      answer.setProperties(struct(keepingProvider(updated.outs, news)));
      return answer;
    },
    delete: async (req: any) => {
      const state = props(req.getProperties());
      const provider = await providers.of(state);
      if (provider.delete) await provider.delete(req.getId(), state);
      return new m.Empty();
    },
  };
}

/**
 * The gRPC error of a failed method: its message, with gRPC's UNKNOWN code whatever the error carries.
 * A creation or update that made its object but could not finish it throws an error with the object's `id` (and
 * `properties`, `reasons`): the engine then keeps the object in the state, told so by the status's details.
 */
function failure(m: Modules, error: any): Partial<grpc.StatusObject> {
  const details = error instanceof Error ? error.message : String(error);
  const metadata = new m.grpc.Metadata();
  if (error?.id) metadata.add("grpc-status-details-bin", initFailureStatus(m, error, details));
  return { code: m.grpc.status.UNKNOWN, details, metadata };
}

/** The status of a partial creation or update, serialized, with the object it made as its one detail. */
function initFailureStatus(m: Modules, error: { id: string; properties?: Props; reasons?: string[] }, details: string): Buffer {
  const made = new m.messages.ErrorResourceInitFailed();
  made.setId(error.id);
  made.setProperties(m.Struct.fromJavaScript(error.properties ?? {}));
  made.setReasonsList(error.reasons ?? []);
  const packed = new m.Any();
  packed.pack(made.serializeBinary(), "pulumirpc.ErrorResourceInitFailed");
  const status = new m.status.Status();
  status.setCode(m.grpc.status.UNKNOWN);
  status.setMessage(details);
  status.addDetails(packed);
  return Buffer.from(status.serializeBinary());
}

/** A method as gRPC calls it: the answer, or the error (with its stack on stderr, which the engine shows, if asked). */
function unary(m: Modules, method: (req: any) => Promise<unknown>, showStack: boolean): grpc.handleUnaryCall<any, any> {
  return (call, callback) => {
    method(call.request).then(
      (answer) => callback(null, answer),
      (error) => {
        if (showStack) console.error(error instanceof Error ? error.stack : String(error));
        const status = failure(m, error);
        callback(status, null, status.metadata);
      },
    );
  };
}

/** Serves on a port of its own, which it prints for the engine (its first line of output). */
async function main(): Promise<void> {
  // An error no method caught still fails the plugin, after it is shown.
  const fail = (error: unknown) => {
    console.error(error instanceof Error ? error.stack : String(error));
    process.exitCode = 1;
  };
  process.on("uncaughtException", fail).on("unhandledRejection", fail);
  const m = programModules();
  const server = new m.grpc.Server(SERVER_OPTIONS);
  const served = Object.entries(methods(m, new Providers(m))).map(([name, method]) => [name, unary(m, method, !failsTheResource(name))]);
  server.addService(m.services.ResourceProviderService, Object.fromEntries(served));
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", m.grpc.ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  process.stdout.write(`${port}\n`);
}

if (require.main === module) {
  main().catch((error) => {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(1);
  });
}
