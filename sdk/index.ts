export * from "./schemas";
export * from "./errors";
export * from "./connection";
export * from "./client";
export * from "./workflows/rent";
export * from "./workflows/wait";
export * from "./resources/instance";
