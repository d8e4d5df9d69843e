import * as path from "node:path";
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

/** Registers the key on the emulator's seeded account, as `POST /api/v0/ssh/` does. */
export function registerOnSeededAccount(emulator: RunningEmulator, key: UserKey): void {
  registerSshKey(emulator, key.publicKey);
}

/** The OpenSSH command line that logs into an instance of this emulator with `key`, its host key checked. */
export function sshCommandLine(emulator: RunningEmulator, key: UserKey, host: string, port: number): string {
  const known = emulator.ssh ? ` -o UserKnownHostsFile=${emulator.ssh.knownHostsFile}` : "";
  return `ssh -i ${key.file ?? "KEY"} -o IdentitiesOnly=yes${known} -p ${port} ${SSH_USER}@${host}`;
}
