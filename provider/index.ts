export { Instance, InstanceProvider } from "./instance";
export type { InstanceArgs } from "./instance";
