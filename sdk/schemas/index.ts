export * from "./filters";
export * from "./offers";
export * from "./instances";
export * from "./users";
export * from "./errors";
