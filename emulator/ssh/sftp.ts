import * as fs from "node:fs";
import * as path from "node:path";
import type { Attributes, FileEntry, SFTPWrapper } from "ssh2";
import { ssh2 } from "../../sdk/ssh2";

/** ssh2's SFTP constants, read when a session needs them: loading the emulator does not load ssh2 (sdk/ssh2.ts). */
const sftpConstants = () => ssh2().utils.sftp;

/** Directory entries sent per READDIR answer. */
const ENTRIES_PER_READ = 100;

interface OpenFile {
  fd: number;
  /**
   * The file's last write: each write starts when the one before it has landed, so their statuses go out in the
   * order of the requests, as OpenSSH's server answers them. scp truncates the file to the end of the writes it
   * saw acknowledged in order: a status out of order left it short. FSETSTAT and CLOSE wait for it too.
   */
  lastWrite: Promise<void>;
}
interface OpenDir {
  dir: string;
  /** Names still to send; null once the end has been reported. */
  names: string[] | null;
}

/**
 * An SFTP server (protocol version 3, as OpenSSH's `sftp`, `scp`, Go's pkg/sftp and ssh2's client speak it)
 * over the machine's files. Relative paths, and the starting folder (`.`), are the instance's sandbox; absolute
 * paths are this computer's, as the machine's shell commands see them.
 */
export function serveSftp(sftp: SFTPWrapper, home: string): void {
  const { STATUS_CODE } = sftpConstants();
  const files = new Map<string, OpenFile>();
  const dirs = new Map<string, OpenDir>();
  let nextHandle = 0;
  const newHandle = () => {
    const handle = Buffer.alloc(4);
    handle.writeUInt32BE(nextHandle++);
    return handle;
  };
  const at = (p: string) => path.resolve(home, p || ".");
  const done = (id: number) => (error: NodeJS.ErrnoException | null) => (error ? failed(sftp, id, error) : sftp.status(id, STATUS_CODE.OK));
  const fileOf = (id: number, handle: Buffer) => {
    const file = files.get(handle.toString("hex"));
    if (!file) sftp.status(id, STATUS_CODE.FAILURE, "no such handle");
    return file;
  };

  sftp.on("OPEN", (id, filename, flags, attrs) => {
    fs.open(at(filename), openFlags(flags), attrs.mode ?? 0o644, (error, fd) => {
      if (error) return failed(sftp, id, error);
      const handle = newHandle();
      files.set(handle.toString("hex"), { fd, lastWrite: Promise.resolve() });
      sftp.handle(id, handle);
    });
  });

  sftp.on("READ", (id, handle, offset, length) => {
    const file = fileOf(id, handle);
    if (!file) return;
    const buffer = Buffer.alloc(Math.min(length, 1 << 18));
    fs.read(file.fd, buffer, 0, buffer.length, offset, (error, bytes) => {
      if (error) return failed(sftp, id, error);
      if (bytes === 0) return sftp.status(id, STATUS_CODE.EOF);
      sftp.data(id, buffer.subarray(0, bytes));
    });
  });

  sftp.on("WRITE", (id, handle, offset, data) => {
    const file = fileOf(id, handle);
    if (!file) return;
    // A copy: `data` is a view into ssh2's incoming buffer, and the write happens after this handler returns.
    const copy = Buffer.from(data);
    file.lastWrite = file.lastWrite.then(() => new Promise<void>((resolve) => writeAll(file.fd, copy, offset, (error) => (done(id)(error), resolve()))));
  });

  sftp.on("FSTAT", (id, handle) => {
    const file = fileOf(id, handle);
    if (file) fs.fstat(file.fd, (error, stats) => (error ? failed(sftp, id, error) : sftp.attrs(id, attrsOf(stats))));
  });

  sftp.on("FSETSTAT", (id, handle, attrs) => {
    const file = fileOf(id, handle);
    // scp sends its FSETSTAT (the size) right after its last WRITEs: it applies once they have landed.
    if (file) afterWrites(file, () => setAttributes(attrs, { chmod: (m) => fs.fchmodSync(file.fd, m), truncate: (s) => fs.ftruncateSync(file.fd, s), utimes: (a, m) => fs.futimesSync(file.fd, a, m) }, done(id)));
  });

  sftp.on("SETSTAT", (id, p, attrs) => {
    const target = at(p);
    setAttributes(attrs, { chmod: (m) => fs.chmodSync(target, m), truncate: (s) => fs.truncateSync(target, s), utimes: (a, m) => fs.utimesSync(target, a, m) }, done(id));
  });

  sftp.on("CLOSE", (id, handle) => {
    const key = handle.toString("hex");
    const file = files.get(key);
    if (file) {
      files.delete(key);
      // Closing before the last WRITEs land would lose them (scp was seen to leave a short file).
      afterWrites(file, () => fs.close(file.fd, done(id)));
      return;
    }
    if (dirs.delete(key)) return sftp.status(id, STATUS_CODE.OK);
    sftp.status(id, STATUS_CODE.FAILURE, "no such handle");
  });

  sftp.on("OPENDIR", (id, p) => {
    const dir = at(p);
    fs.readdir(dir, (error, names) => {
      if (error) return failed(sftp, id, error);
      const handle = newHandle();
      dirs.set(handle.toString("hex"), { dir, names: [".", "..", ...names] });
      sftp.handle(id, handle);
    });
  });

  sftp.on("READDIR", (id, handle) => {
    const open = dirs.get(handle.toString("hex"));
    if (!open) return sftp.status(id, STATUS_CODE.FAILURE, "no such handle");
    if (!open.names?.length) {
      open.names = null;
      return sftp.status(id, STATUS_CODE.EOF);
    }
    const batch = open.names.splice(0, ENTRIES_PER_READ);
    const entries: FileEntry[] = [];
    for (const name of batch) {
      try {
        const stats = fs.lstatSync(path.join(open.dir, name));
        entries.push({ filename: name, longname: longname(name, stats), attrs: attrsOf(stats) });
      } catch {
        // removed since the listing was read
      }
    }
    sftp.name(id, entries);
  });

  const stat = (id: number, p: string, how: typeof fs.stat) => how(at(p), (error, stats) => (error ? failed(sftp, id, error) : sftp.attrs(id, attrsOf(stats))));
  sftp.on("STAT", (id, p) => stat(id, p, fs.stat));
  sftp.on("LSTAT", (id, p) => stat(id, p, fs.lstat));
  sftp.on("REMOVE", (id, p) => fs.unlink(at(p), done(id)));
  sftp.on("RMDIR", (id, p) => fs.rmdir(at(p), done(id)));
  sftp.on("MKDIR", (id, p, attrs) => fs.mkdir(at(p), { mode: attrs.mode ?? 0o755 }, done(id)));
  sftp.on("REALPATH", (id, p) => {
    const resolved = at(p);
    sftp.name(id, [{ filename: resolved, longname: resolved, attrs: {} as Attributes }]);
  });
  sftp.on("READLINK", (id, p) =>
    fs.readlink(at(p), (error, target) => (error ? failed(sftp, id, error) : sftp.name(id, [{ filename: target, longname: target, attrs: {} as Attributes }]))),
  );
  sftp.on("SYMLINK", (id, linkPath, targetPath) => fs.symlink(targetPath, at(linkPath), done(id)));
  // SFTP v3: a rename onto an existing file fails (clients that want to replace remove it first).
  sftp.on("RENAME", (id, from, to) => {
    if (fs.existsSync(at(to))) return sftp.status(id, STATUS_CODE.FAILURE, `${to} exists`);
    fs.rename(at(from), at(to), done(id));
  });

  const closeAll = () => {
    for (const file of files.values()) afterWrites(file, () => fs.close(file.fd, () => undefined));
    files.clear();
    dirs.clear();
  };
  sftp.on("close", closeAll);
  // The client has sent all it will (EOF): the channel is closed from this side too, or the client waits on.
  sftp.on("end", () => {
    closeAll();
    exitZero(sftp);
    sftp.end();
  });
}

/** Runs `then` once the file's writes asked for so far have landed. */
function afterWrites(file: OpenFile, then: () => void): void {
  void file.lastWrite.then(then);
}

/** Writes all of `data` at `offset`, however many calls that takes (a write may take fewer bytes than given). */
function writeAll(fd: number, data: Buffer, offset: number, callback: (error: NodeJS.ErrnoException | null) => void): void {
  fs.write(fd, data, 0, data.length, offset, (error, written) => {
    if (error || written === data.length) return callback(error);
    writeAll(fd, data.subarray(written), offset + written, callback);
  });
}

/**
 * Sends the channel's exit status 0, as OpenSSH's sftp-server ends: scp and sftp exit with the status the
 * server gives (-1, a failure, without one). ssh2's SFTP stream has no exit(), so its protocol is called as its
 * own Channel.exit() does.
 */
function exitZero(sftp: SFTPWrapper): void {
  const channel = sftp as unknown as { _protocol?: { exitStatus(id: number, code: number): void }; outgoing?: { id: number; state: string } };
  if (channel._protocol && channel.outgoing?.state === "open") channel._protocol.exitStatus(channel.outgoing.id, 0);
}

/** The fs flags of SFTP open flags, any combination (scp opens with WRITE|CREAT and truncates apart). */
function openFlags(flags: number): number {
  const { O_RDONLY, O_WRONLY, O_RDWR, O_APPEND, O_CREAT, O_TRUNC, O_EXCL } = fs.constants;
  const { OPEN_MODE } = sftpConstants();
  const read = flags & OPEN_MODE.READ;
  const write = flags & OPEN_MODE.WRITE;
  let result = read && write ? O_RDWR : write ? O_WRONLY : O_RDONLY;
  if (flags & OPEN_MODE.APPEND) result |= O_APPEND;
  if (flags & OPEN_MODE.CREAT) result |= O_CREAT;
  if (flags & OPEN_MODE.TRUNC) result |= O_TRUNC;
  if (flags & OPEN_MODE.EXCL) result |= O_EXCL;
  return result;
}

/** An error as OpenSSH's sftp-server words it (no path of this computer in it). */
function failed(sftp: SFTPWrapper, id: number, error: NodeJS.ErrnoException): void {
  const { STATUS_CODE } = sftpConstants();
  if (error.code === "ENOENT") return sftp.status(id, STATUS_CODE.NO_SUCH_FILE, "No such file");
  if (error.code === "EACCES" || error.code === "EPERM") return sftp.status(id, STATUS_CODE.PERMISSION_DENIED, "Permission denied");
  sftp.status(id, STATUS_CODE.FAILURE, `Failure (${error.code ?? "error"})`);
}

function setAttributes(
  attrs: Attributes,
  apply: { chmod(mode: number): void; truncate(size: number): void; utimes(atime: number, mtime: number): void },
  done: (error: NodeJS.ErrnoException | null) => void,
): void {
  try {
    if (attrs.mode !== undefined) apply.chmod(attrs.mode & 0o7777);
    if (attrs.size !== undefined) apply.truncate(attrs.size);
    if (attrs.atime !== undefined && attrs.mtime !== undefined) apply.utimes(attrs.atime, attrs.mtime);
    done(null);
  } catch (error) {
    done(error as NodeJS.ErrnoException);
  }
}

function attrsOf(stats: fs.Stats): Attributes {
  return {
    mode: stats.mode,
    uid: stats.uid,
    gid: stats.gid,
    size: stats.size,
    atime: Math.floor(stats.atimeMs / 1000),
    mtime: Math.floor(stats.mtimeMs / 1000),
  };
}

/** The `ls -l` line that `sftp`'s `ls -l` shows for an entry. */
function longname(name: string, stats: fs.Stats): string {
  const type = stats.isDirectory() ? "d" : stats.isSymbolicLink() ? "l" : "-";
  const bits = "rwxrwxrwx".split("").map((c, i) => (stats.mode & (1 << (8 - i)) ? c : "-")).join("");
  const date = stats.mtime.toISOString().slice(0, 16).replace("T", " ");
  return `${type}${bits} ${stats.nlink} root root ${String(stats.size).padStart(8)} ${date} ${name}`;
}
