/**
 * The engine's plugin for dynamic providers (`pulumi-resource-pulumi-nodejs`), as the toolchain installs it: a
 * gRPC server that loads each resource's provider from its `__provider` input (the provider object's serialized
 * module) and calls its methods. @pulumi/pulumi's own plugin loads the whole SDK (some 770 modules, half a second
 * of CPU) before it serves; this one loads the server, the protocol's messages and the providers it is given,
 * nothing else, so every `preview`, `up`, `refresh` and `destroy` of a TypeScript program starts its provider
 * sooner. Providers see what they see under Pulumi's plugin: the same calls, arguments and answers.
 *
 * It is copied into the toolchain's folder with provider-server.js, the server both of gpu-rental's plugins serve
 * with (tools/pulumi-toolchain.sh), so it imports nothing else of gpu-rental: gRPC and the protocol's messages
 * come from the program's own @pulumi/pulumi, found from its folder (the plugin's working directory).
 */
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";
import { checkFailures, diffResponse, Method, Props, propsOf, serve, serverModules } from "./provider-server";

/** The key of the serialized provider in every dynamic resource's inputs and outputs. */
const PROVIDER = "__provider";
/** What the engine sends for a value not known yet (a preview of an input computed from another resource). */
const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
/** The signature of a secret wrapped as an object (`{4dabf18193072939515e22adb298388d: SECRET, value}`). */
const SIGNATURE = "4dabf18193072939515e22adb298388d";
const SECRET = "1b47061264138c4ac30d75fd1eb44270";
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
    ...serverModules(fromPulumi),
    version: JSON.parse(fs.readFileSync(manifest, "utf8")).version as string,
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
function methods(m: Modules, providers: Providers): Record<string, Method> {
  const struct = (values: Props) => m.Struct.fromJavaScript(values);
  return {
    getPluginInfo: async () => {
      const info = new m.plugin.PluginInfo();
      info.setVersion(m.version);
      return info;
    },
    configure: async (req: any) => {
      providers.configure(propsOf(req.getArgs()));
      const answer = new m.messages.ConfigureResponse();
      answer.setAcceptsecrets(false);
      return answer;
    },
    cancel: async () => new m.Empty(),
    check: async (req: any) => {
      const [olds, news] = [propsOf(req.getOlds()), propsOf(req.getNews())];
      const provider = await providers.of(news, olds);
      const checked = provider.check ? await provider.check(olds, news) : {};
      const answer = new m.messages.CheckResponse();
      answer.setInputs(struct(keepingProvider(checked.inputs ?? news, news)));
      answer.setFailuresList(checkFailures(m, checked.failures));
      return answer;
    },
    diff: async (req: any) => {
      const [olds, news] = [propsOf(req.getOlds()), propsOf(req.getNews())];
      const provider = await providers.of(news, olds);
      return diffResponse(m, provider.diff && (await provider.diff(req.getId(), olds, news)));
    },
    create: async (req: any) => {
      const inputs = propsOf(req.getProperties());
      const made = await (await providers.of(inputs)).create!(inputs);
      const answer = new m.messages.CreateResponse();
      answer.setId(made.id);
      answer.setProperties(struct(keepingProvider(made.outs, inputs)));
      return answer;
    },
    read: async (req: any) => {
      const state = propsOf(req.getProperties());
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
      const [olds, news] = [propsOf(req.getOlds()), propsOf(req.getNews())];
      const provider = await providers.of(news);
      const updated = (provider.update && (await provider.update(req.getId(), olds, news))) || {};
      const answer = new m.messages.UpdateResponse();
      answer.setProperties(struct(keepingProvider(updated.outs, news)));
      return answer;
    },
    delete: async (req: any) => {
      const state = propsOf(req.getProperties());
      const provider = await providers.of(state);
      if (provider.delete) await provider.delete(req.getId(), state);
      return new m.Empty();
    },
  };
}

/** Serves the providers it is given, loaded from the program's own @pulumi/pulumi. */
function main(): Promise<void> {
  const m = programModules();
  return serve(m, methods(m, new Providers(m)));
}

if (require.main === module) {
  main().catch((error) => {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(1);
  });
}
