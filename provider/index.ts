export { Instance } from "./instance";
export type { InstanceArgs } from "./instance";
