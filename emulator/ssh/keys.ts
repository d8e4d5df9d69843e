import { createPrivateKey, createPublicKey, randomBytes } from "node:crypto";

/**
 * A new ed25519 key pair as `ssh-keygen -t ed25519` writes it: the private key in OpenSSH's format
 * (openssh-key-v1, unencrypted) and the public key line.
 *
 * Made here from node:crypto rather than with ssh2's `utils.generateKeyPairSync`, which writes a public key whose
 * first byte is zero as 31 bytes (as if it were a number), so some keys cannot be read back. The seed is
 * drawn here and read back as PKCS#8, not made by generateKeyPairSync and exported as JWK: Node 20 can deadlock
 * there (a collected key-generation job waits for the lock the JWK export holds, and the process hangs).
 */
export function ed25519KeyPair(comment: string): { private: string; public: string } {
  const seed = randomBytes(32);
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519, seed]), format: "der", type: "pkcs8" });
  // The SPKI form ends with the 32 bytes of the public key.
  const pub = createPublicKey(privateKey).export({ format: "der", type: "spki" }).subarray(-32);
  const publicBlob = Buffer.concat([sshString("ssh-ed25519"), sshString(pub)]);
  const check = randomBytes(4);
  const secrets = Buffer.concat([check, check, publicBlob, sshString(Buffer.concat([seed, pub])), sshString(comment)]);
  // Padded with 1, 2, 3, ... to the cipher's block size (8 for "none").
  const padding = Buffer.from(Array.from({ length: (8 - (secrets.length % 8)) % 8 }, (_, i) => i + 1));
  const body = Buffer.concat([
    Buffer.from("openssh-key-v1\0", "latin1"),
    sshString("none"),
    sshString("none"),
    sshString(""),
    uint32(1),
    sshString(publicBlob),
    sshString(Buffer.concat([secrets, padding])),
  ]);
  const lines = body.toString("base64").match(/.{1,70}/g)!;
  return {
    private: `-----BEGIN OPENSSH PRIVATE KEY-----\n${lines.join("\n")}\n-----END OPENSSH PRIVATE KEY-----\n`,
    public: `ssh-ed25519 ${publicBlob.toString("base64")} ${comment}`,
  };
}

/** The PKCS#8 (DER) of an Ed25519 private key up to its 32-byte seed (RFC 8410). */
const PKCS8_ED25519 = Buffer.from("302e020100300506032b657004220420", "hex");

function uint32(value: number): Buffer {
  const buffer = Buffer.alloc(4);
  buffer.writeUInt32BE(value);
  return buffer;
}

/** SSH's `string`: a length, then the bytes. */
function sshString(value: string | Buffer): Buffer {
  const bytes = typeof value === "string" ? Buffer.from(value, "utf8") : value;
  return Buffer.concat([uint32(bytes.length), bytes]);
}
