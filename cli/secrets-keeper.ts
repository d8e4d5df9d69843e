import * as crypto from "node:crypto";
import * as http from "node:http";

/**
 * The secrets keeper of a throwaway stack (`gpu-rental test`'s, the suite's): a key service on loopback that
 * speaks the two calls of a Vault transit engine that Pulumi's `hashivault://` secrets provider makes (encrypt and
 * decrypt the stack's data key), under an AES-256-GCM key that lives in this process's memory only. The stack's
 * secrets are encrypted as with any cloud key service; what it spares is the passphrase provider's key derivation
 * (PBKDF2, some 0.2 s of CPU in every pulumi command that reads or writes a secret). A stack it keeps can be read
 * only while this process runs: for stacks that end with it.
 */
export interface SecretsKeeper {
  /** The secrets provider to init a stack with. */
  readonly provider: string;
  /** What the pulumi commands of such a stack need in their environment to reach the keeper. */
  readonly env: Record<string, string>;
  close(): Promise<void>;
}

const KEY_NAME = "gpu-rental-stack";

export async function startSecretsKeeper(): Promise<SecretsKeeper> {
  const key = crypto.randomBytes(32);
  const token = crypto.randomBytes(24).toString("hex");
  const server = http.createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (body += chunk));
    req.on("end", () => {
      const answer = (status: number, data: unknown) => {
        // Each answer ends its connection: a client that kept it would send a later call (the update's decrypt,
        // seconds after the preview's) on a socket this server may be closing as idle, and read a reset.
        res.writeHead(status, { "content-type": "application/json", connection: "close" });
        res.end(JSON.stringify(data));
      };
      if (req.headers["x-vault-token"] !== token) return answer(403, { errors: ["permission denied"] });
      try {
        const request = JSON.parse(body || "{}") as { plaintext?: string; ciphertext?: string };
        if (req.url === `/v1/transit/encrypt/${KEY_NAME}` && request.plaintext !== undefined) {
          return answer(200, { data: { ciphertext: seal(key, Buffer.from(request.plaintext, "base64")) } });
        }
        if (req.url === `/v1/transit/decrypt/${KEY_NAME}` && request.ciphertext !== undefined) {
          return answer(200, { data: { plaintext: open(key, request.ciphertext).toString("base64") } });
        }
        answer(404, { errors: ["no such route"] });
      } catch {
        answer(400, { errors: ["the ciphertext was not sealed by this keeper"] });
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  // It serves the stack's commands while the process lives; it never keeps the process alive by itself.
  server.unref();
  const { port } = server.address() as { port: number };
  return {
    provider: `hashivault://${KEY_NAME}`,
    env: { VAULT_SERVER_URL: `http://127.0.0.1:${port}`, VAULT_SERVER_TOKEN: token },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** `vault:v1:` and base64 of the nonce, the ciphertext and the tag, as Vault's own ciphertexts are prefixed. */
function seal(key: Buffer, plaintext: Buffer): string {
  const nonce = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv("aes-256-gcm", key, nonce);
  const sealed = Buffer.concat([nonce, cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
  return `vault:v1:${sealed.toString("base64")}`;
}

function open(key: Buffer, ciphertext: string): Buffer {
  const sealed = Buffer.from(ciphertext.replace(/^vault:v1:/, ""), "base64");
  const decipher = crypto.createDecipheriv("aes-256-gcm", key, sealed.subarray(0, 12));
  decipher.setAuthTag(sealed.subarray(sealed.length - 16));
  return Buffer.concat([decipher.update(sealed.subarray(12, sealed.length - 16)), decipher.final()]);
}
