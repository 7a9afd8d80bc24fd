#!/bin/sh
# Part of the image build (Dockerfile, stage `rootfs`): the runtime image's whole root filesystem,
# taken from the Debian-based build image it runs in, holding only what a run uses:
#   - node (as the base has it) and the shared libraries it links: glibc, libstdc++, libgcc_s;
#   - /bin/sh (dash) and cat, mktemp, mkfifo, rm, sleep with their libraries: helm's post-renderer
#     is a few lines of sh that hand the stream to the installer (src/images/post-render-host.ts);
#   - CA certificates, /etc/ssl/certs/ca-certificates.crt, written from Node's own store (Mozilla's,
#     as Debian's ca-certificates package is): helm (Go) reads that file;
#   - /etc/passwd and /etc/group naming the Job's user (65532), /etc/nsswitch.conf (hosts: files,
#     then DNS), an empty /tmp (the Job mounts an emptyDir there) and mount points.
# helm is static: the Dockerfile copies it on top. No package manager, no npm, no node_modules.
#   sh runtime-rootfs.sh <dir>
set -eu
root=$1
mkdir -p "$root/usr/bin" "$root/usr/lib" "$root/usr/lib64" "$root/usr/local/bin" "$root/etc/ssl/certs" "$root/dev" "$root/proc" "$root/sys" "$root/tmp"
# Debian's merged /usr: the paths binaries name (/lib64/ld-linux-x86-64.so.2, /bin/sh) resolve.
ln -s usr/bin "$root/bin"
ln -s usr/lib "$root/lib"
ln -s usr/lib64 "$root/lib64"
chmod 1777 "$root/tmp"

# A file under the same name, its directory resolved (so /lib/x/libc.so.6 lands in /usr/lib/x),
# its content dereferenced (a soname link becomes the library itself).
put() {
  dir=$(cd "$(dirname "$1")" && pwd -P)
  mkdir -p "$root$dir"
  cp -L "$1" "$root$dir/$(basename "$1")"
}
# node where the official image has it, whatever the PATH found.
cp -L "$(command -v node)" "$root/usr/local/bin/node"
for program in "$(command -v node)" /bin/sh "$(command -v cat)" "$(command -v mktemp)" "$(command -v mkfifo)" "$(command -v rm)" "$(command -v sleep)"; do
  [ "$program" = "$(command -v node)" ] || put "$program"
  # The libraries it links, the dynamic loader included (ldd prints each path once).
  for lib in $(ldd "$program" | grep -o '/[^ ]*'); do put "$lib"; done
done

node -e "process.stdout.write(require('node:tls').rootCertificates.join('\n') + '\n')" > "$root/etc/ssl/certs/ca-certificates.crt"
printf 'root:x:0:0:root:/root:/usr/sbin/nologin\nnonroot:x:65532:65532:nonroot:/tmp:/usr/sbin/nologin\n' > "$root/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' > "$root/etc/group"
printf 'hosts: files dns\n' > "$root/etc/nsswitch.conf"
# Node's compile cache, filled at build time as the Job's user (the Dockerfile says why).
mkdir -p "$root/opt/helm-installer/compile-cache"
chown 65532:65532 "$root/opt/helm-installer/compile-cache"
