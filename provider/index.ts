export { Instance, InstanceProvider } from "./instance";
export type { InstanceArgs } from "./instance";
export { Template, TemplateProvider } from "./template";
export type { TemplateArgs } from "./template";
export { NetworkVolume, NetworkVolumeProvider } from "./network-volume";
export type { NetworkVolumeArgs } from "./network-volume";
export { ApiKey, ApiKeyProvider } from "./api-key";
export type { ApiKeyArgs } from "./api-key";
export { SdkProvider } from "./sdk-provider";
