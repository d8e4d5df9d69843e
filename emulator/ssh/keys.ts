import { generateKeyPairSync, randomBytes } from "node:crypto";

/**
 * A new ed25519 key pair as `ssh-keygen -t ed25519` writes it: the private key in OpenSSH's format
 * (openssh-key-v1, unencrypted) and the public key line.
 *
 * Made here from node:crypto rather than with ssh2's `utils.generateKeyPairSync`, which writes a public key whose
 * first byte is zero as 31 bytes (as if it were a number), so about 1 key in 280 cannot be read back.
 */
export function ed25519KeyPair(comment: string): { private: string; public: string } {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const pub = Buffer.from(publicKey.export({ format: "jwk" }).x!, "base64url");
  const seed = Buffer.from(privateKey.export({ format: "jwk" }).d!, "base64url");
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
