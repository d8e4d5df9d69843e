/**
 * The shell programs that make an emulated machine's namespaces and root filesystem (./machine-space.ts runs them
 * with util-linux's `unshare`), in two stages.
 *
 * The first stage runs in a mount namespace of its own (as this computer's root when the emulator is root; else as
 * the emulator's user, root in a user namespace of its own), its working folder the machine's folder (`mnt/` the
 * mount point, `disk.tar` the machine's files kept while it is down). It mounts the machine's disk, a tmpfs the size
 * of the instance's `disk` (a write past it fails with "No space left on device"), unpacks the kept files into it,
 * and builds the root in `mnt/fs`: this computer's system folders each an overlay (this computer's folder, under
 * the base layer of ./base-layer.ts, under the machine's own upper folder in `mnt/upper`), `/root`, `/tmp` and the
 * rest the machine's own, `/dev` with the few devices a container has, `/sys` read-only, `/run` a new tmpfs with
 * the machine's tools and its volumes, and the emulator's own folders covered where they lie in a system folder.
 * Every mount it makes is locked for the second stage, whose user namespace is a less privileged one: the machine
 * may not undo them.
 *
 * The second stage is the machine's first process: a user namespace of its own (root in it is the machine's owner,
 * an unprivileged user of this computer), with its own mount, PID, UTS and IPC namespaces (and network, for a
 * machine with its own), it makes `mnt/fs` its root (pivot_root), mounts its /proc, names the host, mounts the
 * volumes where the instance says (paths resolved inside the machine's root), says `ready`, then waits on its
 * standard input, reaping the processes orphaned to it, until the emulator that started it ends (the pipe closes)
 * or kills it: with it, the kernel ends every process of the machine.
 */

/** Where the machine's processes find the emulator's tools (`date`, `sleep`, `nvidia-smi`), their state and the clock. */
export const INSIDE = {
  bin: "/run/gpu-rental/bin",
  waits: "/run/gpu-rental/waits",
  volumes: "/run/gpu-rental/volumes",
  /** The clock's folder: a file bound alone would stay the one it was, and the emulator replaces the file. */
  clockDir: "/run/gpu-rental/clock",
  clock: "/run/gpu-rental/clock/now",
} as const;

/** The PATH of the machine's processes: its tools first, then a container's usual folders. */
export const MACHINE_PATH = `${INSIDE.bin}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`;

/** The folders of the machine's root that are mount points, never its files: not packed with them (./machine-space.ts). */
export const MOUNTED = ["dev", "proc", "sys", "run"];

/**
 * Arguments: the disk's size in MiB; 1 for a network of its own; the overlaid system folders; the root's links
 * (`bin=usr/bin`); the emulator's folders to cover (relative to the root, one a line); the host name; the base
 * layer; the machine's tools; its sleeps' folder; the clock's folder; its volumes (`<folder><tab><path in the
 * machine>[<tab>ro]`, one a line; `ro` bound read-only); the second stage's program; the shell of the machine's first process; the uid of the
 * machines' owner under root (empty otherwise); the command that makes the second stage's process that user (the
 * same).
 */
export const STAGE_ONE = `set -eu
size=$1 net=$2 dirs=$3 links=$4 covered=$5 hostname=$6 base=$7 bin=$8 waits=$9
shift 9
clock=$1 volumes=$2 stage_two=$3 shell=$4 owner=$5 as_owner=$6
tab=$(printf '\\t')
# The tmpfs the machine writes in are its root's, under root as well.
ids=
if [ -n "$owner" ]; then ids=",uid=$owner,gid=$owner"; fi
# The path under mnt/fs of a folder the root shows (through system folders only, no link on the way), or nothing.
shown() {
  path=mnt/fs rest=$1
  while [ -n "$rest" ]; do
    part=\${rest%%/*}
    if [ "$part" = "$rest" ]; then rest=; else rest=\${rest#*/}; fi
    path="$path/$part"
    if [ -L "$path" ] || [ ! -d "$path" ]; then return 0; fi
  done
  echo "$path"
}
read_only_bind() {
  mount -c --bind "$1" "$2"
  mount -c -o remount,bind,ro "$2"
}
mount -c -t tmpfs -o "size=\${size}m,mode=755$ids" gpu-rental-disk mnt
if [ -f disk.tar ]; then tar -C mnt -xf disk.tar; fi
# The machine's folders: made where they are not, anew where its kept files hold something else there (a link).
own="mnt/fs mnt/upper"
for name in $dirs ${MOUNTED.join(" ")} home mnt media; do own="$own mnt/fs/$name"; done
for dir in $dirs; do own="$own mnt/upper/$dir mnt/work/$dir"; done
for path in $own mnt/fs/root mnt/fs/tmp; do
  if [ -L "$path" ] || { [ -e "$path" ] && [ ! -d "$path" ]; }; then rm -rf "$path"; fi
done
mkdir -p $own
mkdir -p -m 700 mnt/fs/root
mkdir -p -m 1777 mnt/fs/tmp
if [ -n "$owner" ]; then chown "$owner:$owner" $own mnt/fs/root mnt/fs/tmp; fi
for link in $links; do
  if [ ! -e "mnt/fs/\${link%%=*}" ] && [ ! -L "mnt/fs/\${link%%=*}" ]; then ln -s "\${link#*=}" "mnt/fs/\${link%%=*}"; fi
done
for dir in $dirs; do
  lower="/$dir"
  if [ -d "$base/$dir" ]; then lower="$base/$dir:/$dir"; fi
  mount -c -t overlay gpu-rental-root -o "lowerdir=$lower,upperdir=mnt/upper/$dir,workdir=mnt/work/$dir" "mnt/fs/$dir"
done
printf '%s\\n' "$covered" | while IFS= read -r relative; do
  path=$(shown "$relative")
  if [ -n "$relative" ] && [ -n "$path" ]; then mount -c -t tmpfs -o ro,size=4k,mode=555 gpu-rental-covered "$path"; fi
done
# /dev: the devices a container has, its terminals, and /dev/shm (a folder of this tmpfs: 64 MiB, as Docker's).
mount -c -t tmpfs -o "mode=755,size=64m$ids" gpu-rental-dev mnt/fs/dev
devices="null zero full random urandom tty"
(cd mnt/fs/dev && touch $devices && mkdir -m 1777 shm pts)
for device in $devices; do mount -c --bind "/dev/$device" "mnt/fs/dev/$device"; done
mount -c -t devpts -o newinstance,ptmxmode=0666,mode=0620 gpu-rental-pts mnt/fs/dev/pts
ln -s pts/ptmx mnt/fs/dev/ptmx
ln -s /proc/self/fd mnt/fs/dev/fd
ln -s /proc/self/fd/0 mnt/fs/dev/stdin
ln -s /proc/self/fd/1 mnt/fs/dev/stdout
ln -s /proc/self/fd/2 mnt/fs/dev/stderr
mount -c --rbind /sys mnt/fs/sys
mount -c -o remount,bind,ro mnt/fs/sys
mount -c -t tmpfs -o "mode=755,size=1m$ids" gpu-rental-run mnt/fs/run
mkdir -p "mnt/fs${INSIDE.bin}" "mnt/fs${INSIDE.clockDir}" "mnt/fs${INSIDE.waits}"
read_only_bind "$bin" "mnt/fs${INSIDE.bin}"
read_only_bind "$clock" "mnt/fs${INSIDE.clockDir}"
mount -c --bind "$waits" "mnt/fs${INSIDE.waits}"
n=0 mounts=
while IFS="$tab" read -r folder target mode; do
  if [ -z "$target" ]; then continue; fi
  mkdir -p "mnt/fs${INSIDE.volumes}/$n"
  if [ "$mode" = ro ]; then read_only_bind "$folder" "mnt/fs${INSIDE.volumes}/$n"; else mount -c --bind "$folder" "mnt/fs${INSIDE.volumes}/$n"; fi
  mounts="$mounts$n$tab$target
"
  n=$((n + 1))
done <<VOLUMES
$volumes
VOLUMES
own_net=
if [ "$net" = 1 ]; then own_net=--net; fi
exec $as_owner unshare --user --map-root-user --mount --pid --fork --uts --ipc $own_net --kill-child --propagation private -- /bin/sh -c "$stage_two" stage-two "$net" "$hostname" "$mounts" "$shell"
`;

/** Arguments: 1 for a network of its own, the host name, the volumes (`<n><tab><path in the machine>`), the shell. */
export const STAGE_TWO = `set -eu
net=$1 hostname=$2 mounts=$3 shell=$4
tab=$(printf '\\t')
mount -c --rbind mnt/fs mnt/fs
if [ "$net" = 1 ]; then ip link set lo up; fi
# Paths relative to the working folder, never a cd to it: a shell's cd walks the folder's full path, whose upper
# folders this user may not enter (a temporary folder of root's).
mkdir mnt/fs/run/.old
pivot_root mnt/fs mnt/fs/run/.old
cd /
mount -t proc gpu-rental-proc /proc
umount -l /run/.old
rmdir /run/.old
if command -v hostname > /dev/null; then hostname "$hostname"; fi
printf '%s' "$mounts" | while IFS="$tab" read -r n target; do
  mkdir -p "$target"
  mount --bind "${INSIDE.volumes}/$n" "$target"
done
cd /root
echo ready
# bash reads ~/.bashrc when its standard input is a socket, as sshd's are (Node's pipes are sockets): not this one.
case "$shell" in
  *bash) exec "$shell" --norc -c 'while read -r _; do :; done' ;;
  *) exec "$shell" -c 'while read -r _; do :; done' ;;
esac
`;
