import * as fs from "node:fs";
import * as path from "node:path";
import { ssh2 } from "../sdk/ssh2";
import { ed25519KeyPair, loadOrMakeKey, registerSshKey, RunningEmulator, SSH_USER, userCacheDir } from "../emulator";

export interface UserKey {
  privateKey: string;
  publicKey: string;
  /** Where the private key is, when it is in a file. */
  file?: string;
}

/** The demo key of the main job: made once in the user's cache (0600), for the local emulator only. */
export function demoKey(): UserKey {
  const file = path.join(userCacheDir(), "ssh", "id_ed25519");
  const key = loadOrMakeKey(file);
  return { privateKey: key.private, publicKey: key.public, file };
}

/** A key of this run only, in memory (`gpu-rental test --ssh-key-config`). */
export function freshKey(): UserKey {
  const made = ed25519KeyPair("gpu-rental test");
  return { privateKey: made.private, publicKey: made.public };
}

/**
 * The user's own key (`gpu-rental emulator --ssh-key FILE`): FILE is the private key, its public half in FILE.pub
 * as ssh-keygen writes it (or FILE is the .pub, the private key beside it). Only the public half is read.
 */
export function keyFromFile(file: string): Pick<UserKey, "publicKey" | "file"> {
  const [privateFile, publicFile] = file.endsWith(".pub") ? [file.slice(0, -4), file] : [file, `${file}.pub`];
  if (!fs.existsSync(publicFile)) {
    throw new Error(`--ssh-key ${file}: there is no ${publicFile} beside it. Give the private key whose public half ssh-keygen wrote as FILE.pub (ssh-keygen -t ed25519 -f ${privateFile}).`);
  }
  const publicKey = fs.readFileSync(publicFile, "utf8").trim();
  const parsed = ssh2().utils.parseKey(publicKey);
  if (parsed instanceof Error || Array.isArray(parsed)) throw new Error(`--ssh-key ${file}: ${publicFile} is not an OpenSSH public key (ssh-ed25519 AAAA... or ssh-rsa AAAA...).`);
  return { publicKey, file: path.resolve(privateFile) };
}

/** Registers the key on the emulator's seeded account, as `POST /api/v0/ssh/` does. */
export function registerOnSeededAccount(emulator: RunningEmulator, key: Pick<UserKey, "publicKey">): void {
  registerSshKey(emulator, key.publicKey);
}

/**
 * The OpenSSH command line that logs into an instance of this emulator, its host key checked (the emulator's
 * known_hosts file); with `-i` when the key is in a file, else with the user's own keys.
 */
export function sshCommandLine(emulator: RunningEmulator, key: Pick<UserKey, "file">, host: string, port: number): string {
  const known = emulator.ssh ? ` -o UserKnownHostsFile=${emulator.ssh.knownHostsFile}` : "";
  const identity = key.file ? `-i ${key.file} -o IdentitiesOnly=yes` : "";
  return ["ssh", identity, known.trim(), `-p ${port} ${SSH_USER}@${host}`].filter(Boolean).join(" ");
}
