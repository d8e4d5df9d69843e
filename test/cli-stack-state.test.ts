import { stackStateOf } from "../cli/stack-state";

/** How `pulumi stack export` marks a secret: decrypted (`--show-secrets`) it holds `plaintext`, else `ciphertext`. */
const SIG = "4dabf18193072939515e22adb298388d";
const SECRET = "1b47061264138c4ac30d75fd1eb44270";
const plain = (value: unknown) => ({ [SIG]: SECRET, plaintext: JSON.stringify(value) });
const sealed = { [SIG]: SECRET, ciphertext: "v1:abc:def" };
const exported = (outputs: Record<string, unknown>) =>
  JSON.stringify({ deployment: { resources: [{ type: "pulumi:pulumi:Stack", outputs }, { type: "pulumi:providers:gpu-rental" }] } });

it("reads outputs from an export with --show-secrets: secrets decrypted and marked, nested ones marking their whole output", () => {
  const state = stackStateOf(exported({ id: 7, key: plain("k-123"), pair: { host: "h", token: plain("t") }, list: [1, plain(2)] }));
  expect(state.resourceCount).toBe(2);
  expect(state.outputs).toEqual({
    id: { value: 7, secret: false },
    key: { value: "k-123", secret: true },
    pair: { value: { host: "h", token: "t" }, secret: true },
    list: { value: [1, 2], secret: true },
  });
});

it("reads outputs from an export without it: a secret sealed, and an output holding one sealed as a whole", () => {
  const { outputs } = stackStateOf(exported({ id: 7, key: sealed, pair: { host: "h", token: sealed }, list: [1, sealed] }));
  expect(outputs).toEqual({
    id: { value: 7, secret: false },
    key: { value: undefined, secret: true, sealed: true },
    pair: { value: undefined, secret: true, sealed: true },
    list: { value: undefined, secret: true, sealed: true },
  });
});
