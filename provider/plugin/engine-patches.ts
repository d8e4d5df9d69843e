import { fromPulumi } from "../pulumi-modules";

/**
 * Two gaps of @pulumi/pulumi 3.248.0's provider server (`pulumi.provider.main`), closed for this plugin only:
 * - `pulumi import` sends a ReadRequest without properties, and the server calls `.toJavaScript()` on them (a
 *   crash): a missing properties struct is read as an empty one.
 * - The server answers Configure without looking at it: the provider's settings (stack config, or an explicit
 *   provider's inputs) never reach the provider. `onConfigure` receives them, secrets still marked. (DiffConfig
 *   stays unimplemented on purpose: the engine then never replaces a provider for new settings, and its own diff
 *   sees a key that stopped being a secret, so Configure gets it and refuses it.)
 * Both patch the copy of @pulumi/pulumi (and of gRPC) that the server itself uses. What they patch is looked for
 * first: a @pulumi/pulumi without it (another release) stops the plugin at once, naming its version, rather than
 * serving a provider that never gets its settings.
 */
export function patchProviderServer(onConfigure: (args: Record<string, unknown>) => void): void {
  const provproto = fromPulumi("./proto/provider_pb");
  const structproto = fromPulumi("google-protobuf/google/protobuf/struct_pb");
  const provrpc = fromPulumi("./proto/provider_grpc_pb");
  const grpc = fromPulumi("@grpc/grpc-js");
  requirePatchable({
    "ReadRequest.prototype.getProperties": provproto.ReadRequest?.prototype?.getProperties,
    "ConfigureResponse.prototype.setAcceptsecrets": provproto.ConfigureResponse?.prototype?.setAcceptsecrets,
    "ConfigureResponse.prototype.setAcceptresources": provproto.ConfigureResponse?.prototype?.setAcceptresources,
    "ConfigureResponse.prototype.setAcceptoutputs": provproto.ConfigureResponse?.prototype?.setAcceptoutputs,
    "google.protobuf.Struct": structproto.Struct,
    "ResourceProviderService.configure": provrpc.ResourceProviderService?.configure,
    "grpc.Server.prototype.addService": grpc.Server?.prototype?.addService,
  });

  const getProperties = provproto.ReadRequest.prototype.getProperties;
  provproto.ReadRequest.prototype.getProperties = function (this: unknown) {
    return getProperties.call(this) ?? new structproto.Struct();
  };

  const addService = grpc.Server.prototype.addService;
  grpc.Server.prototype.addService = function (this: unknown, service: unknown, implementation: Record<string, unknown>) {
    if (service === provrpc.ResourceProviderService) {
      if (typeof implementation.configure !== "function") refuse("the provider server's Configure handler");
      implementation.configure = (call: any, callback: (error?: unknown, response?: unknown) => void) => {
        try {
          onConfigure(call.request.getArgs()?.toJavaScript() ?? {});
          const response = new provproto.ConfigureResponse();
          response.setAcceptsecrets(true);
          response.setAcceptresources(true);
          response.setAcceptoutputs(true);
          callback(undefined, response);
        } catch (error) {
          callback({ code: grpc.status.FAILED_PRECONDITION, details: (error as Error).message });
        }
      };
    }
    return addService.call(this, service, implementation);
  };
}

/** Every piece the patches replace or call: each must be a function or a class of the @pulumi/pulumi found. */
function requirePatchable(pieces: Record<string, unknown>): void {
  const missing = Object.entries(pieces).filter(([, piece]) => typeof piece !== "function" && (typeof piece !== "object" || piece === null));
  if (missing.length) refuse(missing.map(([name]) => name).join(", "));
}

function refuse(what: string): never {
  const version = String(fromPulumi("./version").version ?? "unknown");
  throw new Error(
    `gpu-rental's provider plugin cannot serve with @pulumi/pulumi ${version}: its provider server lacks ${what}, which the plugin ` +
      "patches (provider/plugin/engine-patches.ts; made for @pulumi/pulumi 3.248.0). Install the plugin with the @pulumi/pulumi it was built " +
      "with (`npx gpu-rental plugin install` from a program whose @pulumi/pulumi is 3.248.0), or use the release's self-contained plugin.",
  );
}
