import { createRequire } from "node:module";

/**
 * The modules of @pulumi/pulumi (and of the gRPC and protobuf it was built with) that the provider shells call or
 * patch beyond its public API: each must be the very copy that @pulumi/pulumi's own provider server uses, so
 * they are resolved from @pulumi/pulumi, not from this package. Listed here once: the plugin executable's bundle
 * (provider/release/bundle.ts) resolves each at build time the same way, as require() of a bundle resolves nothing.
 */
export const PULUMI_MODULES = [
  "./provider/internals",
  "./proto/engine_pb",
  "./proto/engine_grpc_pb",
  "./proto/provider_pb",
  "./proto/provider_grpc_pb",
  "@grpc/grpc-js",
  "google-protobuf/google/protobuf/struct_pb",
  "./version",
] as const;

export type PulumiModule = (typeof PULUMI_MODULES)[number];

/** A module of the @pulumi/pulumi this package finds (the program's, or the plugin folder's). */
export function fromPulumi(id: PulumiModule): any {
  return createRequire(require.resolve("@pulumi/pulumi"))(id);
}
