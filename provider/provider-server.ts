/**
 * The engine's side of a provider plugin, the one mechanism both of gpu-rental's plugins serve with: a gRPC server
 * of the ResourceProvider service on a port of its own (printed for the engine), each method a function from the
 * request to its answer, failures answered as the engine reads them. It loads gRPC and the protocol's messages
 * only (from a given @pulumi/pulumi, the copy the engine's messages were generated with), not @pulumi/pulumi's
 * provider server, which loads much of the SDK (its logging, runtime settings, source maps) before it serves.
 *
 * The dynamic-provider plugin is copied into the toolchain's folder with this file beside it, so neither imports
 * anything else of gpu-rental.
 */
import type * as grpc from "@grpc/grpc-js";

/** The ids of @pulumi/pulumi's modules (and of the gRPC and protobuf it was built with) that a server needs. */
export const SERVER_MODULES = [
  "@grpc/grpc-js",
  "./proto/provider_grpc_pb",
  "./proto/provider_pb",
  "./proto/plugin_pb",
  "./proto/status_pb",
  "google-protobuf/google/protobuf/struct_pb",
  "google-protobuf/google/protobuf/empty_pb",
  "google-protobuf/google/protobuf/any_pb",
] as const;

/** A loader of those modules from @pulumi/pulumi (a `require` made from its folder, or a bundle's table). */
export type ModuleLoader = (id: (typeof SERVER_MODULES)[number]) => any;

/** The modules, loaded, under the names the servers use. */
export function serverModules(load: ModuleLoader) {
  return {
    grpc: load("@grpc/grpc-js") as typeof grpc,
    services: load("./proto/provider_grpc_pb"),
    messages: load("./proto/provider_pb"),
    plugin: load("./proto/plugin_pb"),
    status: load("./proto/status_pb"),
    Struct: load("google-protobuf/google/protobuf/struct_pb").Struct,
    Empty: load("google-protobuf/google/protobuf/empty_pb").Empty,
    Any: load("google-protobuf/google/protobuf/any_pb").Any,
  };
}
export type ServerModules = ReturnType<typeof serverModules>;

export type Props = Record<string, any>;
/** A method of the service: the request (a generated message) to its answer (another). */
export type Method = (req: any) => Promise<unknown>;

/**
 * The server's limits, as the SDK's own servers have them: messages as large as a program's whole state, and a
 * request may wait half an hour in a busy host's queue (a fleet's creations), not gRPC's 30 s.
 */
const SERVER_OPTIONS = { "grpc.max_receive_message_length": 400 * 1024 * 1024, "grpc.server_max_unrequested_time_in_server": 30 * 60 };

/** A struct of the request as plain values (an absent struct, as `pulumi import`'s read sends, as none). */
export const propsOf = (struct: any): Props => (struct ? struct.toJavaScript() : {});

/** The failures of a check, as the response's list. */
export function checkFailures(m: ServerModules, failures: readonly { property: string; reason: string }[] = []): unknown[] {
  return failures.map((failure) => {
    const entry = new m.messages.CheckFailure();
    entry.setProperty(failure.property);
    entry.setReason(failure.reason);
    return entry;
  });
}

/** A diff's answer: changes true, false or not known; what it replaces; whether the old goes first. */
export function diffResponse(m: ServerModules, diff?: { changes?: boolean; replaces?: string[]; deleteBeforeReplace?: boolean }): unknown {
  const answer = new m.messages.DiffResponse();
  if (!diff) return answer;
  const { DiffChanges } = m.messages.DiffResponse;
  answer.setChanges(diff.changes === true ? DiffChanges.DIFF_SOME : diff.changes === false ? DiffChanges.DIFF_NONE : DiffChanges.DIFF_UNKNOWN);
  if (diff.replaces?.length) answer.setReplacesList(diff.replaces);
  if (diff.deleteBeforeReplace) answer.setDeletebeforereplace(true);
  return answer;
}

/**
 * The gRPC error of a failed method: its message, with the gRPC status code it carries (a number), else UNKNOWN,
 * as gRPC answers an error given to it. A creation or update that made its object but could not finish it throws
 * an error with the object's `id` (and `properties`, `reasons`): the engine then keeps the object in the state,
 * told so by the status's details.
 */
export function failure(m: ServerModules, error: any): Partial<grpc.StatusObject> {
  const details = error instanceof Error ? error.message : String(error);
  const metadata = new m.grpc.Metadata();
  if (error?.id) metadata.add("grpc-status-details-bin", initFailureStatus(m, error, details));
  return { code: Number.isInteger(error?.code) ? error.code : m.grpc.status.UNKNOWN, details, metadata };
}

/** The status of a partial creation or update, serialized, with the object it made as its one detail. */
function initFailureStatus(m: ServerModules, error: { id: string; properties?: Props; reasons?: string[] }, details: string): Buffer {
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

/**
 * A creation or update that fails is the resource's failure, which the engine reports in the provider's words;
 * any other method that fails is the provider's fault, shown with its stack too.
 */
const failsTheResource = (method: string) => method === "create" || method === "update";

/** A method as gRPC calls it: the answer, or the error (with its stack on stderr, which the engine shows, if asked). */
function unary(m: ServerModules, name: string, method: Method): grpc.handleUnaryCall<any, any> {
  return (call, callback) => {
    method(call.request).then(
      (answer) => callback(null, answer),
      (error) => {
        if (!failsTheResource(name)) console.error(error instanceof Error ? error.stack : String(error));
        const status = failure(m, error);
        callback(status, null, status.metadata);
      },
    );
  };
}

/**
 * Serves `methods` on a port of its own, which it prints for the engine (its first line of output). A method not
 * among them is answered UNIMPLEMENTED by gRPC itself.
 */
export async function serve(m: ServerModules, methods: Record<string, Method>): Promise<void> {
  // An error no method caught still fails the plugin, after it is shown.
  const fail = (error: unknown) => {
    console.error(error instanceof Error ? error.stack : String(error));
    process.exitCode = 1;
  };
  process.on("uncaughtException", fail).on("unhandledRejection", fail);
  const server = new m.grpc.Server(SERVER_OPTIONS);
  const served = Object.entries(methods).map(([name, method]) => [name, unary(m, name, method)]);
  server.addService(m.services.ResourceProviderService, Object.fromEntries(served));
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", m.grpc.ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  process.stdout.write(`${port}\n`);
}
