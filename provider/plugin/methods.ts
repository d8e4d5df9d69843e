import { checkFailures, diffResponse, Method, propsOf, ServerModules } from "../provider-server";
import { GpuRentalProvider } from "./provider";

/**
 * The plugin's methods of the engine's ResourceProvider service, each from the request to its answer over the
 * provider (provider.ts). Configure hands the settings to `configure` (the provider's lifecycle is made from them);
 * a refused setting is answered FAILED_PRECONDITION, the engine's word for a provider that cannot start so. The
 * config methods (CheckConfig, DiffConfig) stay unimplemented on purpose: the engine then never replaces a
 * provider for new settings, and its own diff sees a key that stopped being a secret, so Configure gets it and
 * refuses it. An import's read comes without properties: read as none.
 */
export function pluginMethods(m: ServerModules, provider: GpuRentalProvider, configure: (args: Record<string, unknown>) => void): Record<string, Method> {
  const struct = (values: object | undefined) => m.Struct.fromJavaScript(values ?? {});
  return {
    getPluginInfo: async () => {
      const info = new m.plugin.PluginInfo();
      info.setVersion(provider.version);
      return info;
    },
    getSchema: async (req) => {
      if (req.getVersion() !== 0) throw new Error(`unsupported schema version ${req.getVersion()}`);
      const answer = new m.messages.GetSchemaResponse();
      answer.setSchema(await provider.getSchema());
      return answer;
    },
    configure: async (req) => {
      try {
        configure(propsOf(req.getArgs()));
      } catch (error) {
        throw Object.assign(error instanceof Error ? error : new Error(String(error)), { code: m.grpc.status.FAILED_PRECONDITION });
      }
      const answer = new m.messages.ConfigureResponse();
      answer.setAcceptsecrets(true);
      answer.setAcceptresources(true);
      answer.setAcceptoutputs(true);
      return answer;
    },
    cancel: async () => {
      await provider.cancel();
      return new m.Empty();
    },
    check: async (req) => {
      const checked = await provider.check(req.getUrn(), propsOf(req.getOlds()), propsOf(req.getNews()));
      const answer = new m.messages.CheckResponse();
      answer.setInputs(struct(checked.inputs));
      answer.setFailuresList(checkFailures(m, checked.failures));
      return answer;
    },
    diff: async (req) => diffResponse(m, await provider.diff(req.getId(), req.getUrn(), propsOf(req.getOlds()), propsOf(req.getNews()))),
    create: async (req) => {
      const made = await provider.create(req.getUrn(), propsOf(req.getProperties()));
      const answer = new m.messages.CreateResponse();
      answer.setId(made.id);
      answer.setProperties(struct(made.outs));
      return answer;
    },
    read: async (req) => {
      const found = await provider.read(req.getId(), req.getUrn(), propsOf(req.getProperties()));
      const answer = new m.messages.ReadResponse();
      answer.setId(found.id);
      answer.setProperties(struct(found.props));
      if (found.inputs !== undefined) answer.setInputs(struct(found.inputs));
      return answer;
    },
    update: async (req) => {
      const updated = await provider.update(req.getId(), req.getUrn(), propsOf(req.getOlds()), propsOf(req.getNews()));
      const answer = new m.messages.UpdateResponse();
      answer.setProperties(struct(updated.outs));
      return answer;
    },
    delete: async (req) => {
      await provider.delete(req.getId(), req.getUrn(), propsOf(req.getProperties()));
      return new m.Empty();
    },
    invoke: async (req) => {
      const result = await provider.invoke(req.getTok(), propsOf(req.getArgs()));
      const answer = new m.messages.InvokeResponse();
      answer.setReturn(struct(result.outputs));
      answer.setFailuresList(checkFailures(m, result.failures));
      return answer;
    },
  };
}
