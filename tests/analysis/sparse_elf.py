#!/usr/bin/env python3
# sparse_elf.py IN OUT SIZE: copy the ELF64 file IN to OUT with its .symtab
# moved past the end of the file and SIZE bytes long (a multiple of 24),
# the file extended to hold it with a hole (truncate): a sparse file of a
# few KB on disk, SIZE long, with IN's build-id and a valid ELF structure.
import shutil, struct, sys

src, dst, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
size -= size % 24
shutil.copyfile(src, dst)
with open(dst, "r+b") as f:
    b = bytearray(f.read())
    assert b[:4] == b"\x7fELF" and b[4] == 2 and b[5] == 1, "ELF64 little-endian only"
    shoff, = struct.unpack_from("<Q", b, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", b, 0x3A)
    off = (len(b) + 4095) // 4096 * 4096 + (1 << 20)
    for i in range(shnum):
        h = shoff + i * shentsize
        if struct.unpack_from("<I", b, h + 4)[0] == 2:	# SHT_SYMTAB
            struct.pack_into("<QQ", b, h + 0x18, off, size)
            break
    else:
        sys.exit("no .symtab in " + src)
    f.seek(0)
    f.write(b)
    f.truncate(off + size)
