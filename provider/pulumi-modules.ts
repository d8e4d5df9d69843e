import { createRequire } from "node:module";
import { SERVER_MODULES } from "./provider-server";

/**
 * The modules of @pulumi/pulumi (and of the gRPC and protobuf it was built with) that the provider shells call
 * beyond its public API: the protocol's messages and gRPC must be the very copies the engine's messages were
 * generated with, so they are resolved from @pulumi/pulumi, not from this package. Listed here once: the plugin executable's bundle
 * (release/bundle.ts) resolves each at build time the same way, as require() of a bundle resolves nothing.
 */
export const PULUMI_MODULES = [...SERVER_MODULES, "./provider/internals", "./proto/engine_pb", "./proto/engine_grpc_pb"] as const;

export type PulumiModule = (typeof PULUMI_MODULES)[number];

/** A module of the @pulumi/pulumi this package finds (the program's, or the plugin folder's). */
export function fromPulumi(id: PulumiModule): any {
  return createRequire(require.resolve("@pulumi/pulumi"))(id);
}
