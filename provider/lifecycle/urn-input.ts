/**
 * The input that carries a dynamic resource's URN (the dynamic provider host gives `create` none). A module of its
 * own, importing nothing: the resource classes in a program need it, and nothing else of the lifecycle.
 */
export const URN_INPUT = "__urn";
