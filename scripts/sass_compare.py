#!/usr/bin/env python3
"""Compares the device code of two sets of builds (scripts/sass-compare.sh makes them).

For every build present on both sides (BASE/<name>.cubin and HEAD/<name>.cubin, and the
cuobjdump -sass listings <name>.sass when the machine had cuobjdump) it pairs the functions
by their code, not their names (a kernel moved into a template has another mangled name):

  * machine code: the bytes of every .text.<function> section of the cubin (the SASS
    itself, encoded), with the relocations against it (offset and type; the symbol only by
    kind), which is the strongest comparison;
  * SASS text (with cuobjdump): each function's listing with addresses, encodings and
    symbol names taken out.

Prints one line per build (identical; removed: every function after has its identical one
before but some before are gone, named; or what differs and the functions on each side) and
a last line with the totals; exits 0 when every build is identical, 2 when the only
differences are functions no longer built (a kernel nothing launches any more, or one whose
launch was taken out: read the names), 1 otherwise.
Usage: sass_compare.py BASE_DIR HEAD_DIR
"""
import hashlib
import os
import re
import struct
import sys


def sections(path):
    data = open(path, "rb").read()
    if data[:4] != b"\x7fELF" or data[4] != 2:
        raise SystemExit(f"{path}: not a 64-bit ELF cubin")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    heads = []
    for i in range(shnum):
        name, typ, flags, addr, off, size, link, info, align, entsize = struct.unpack_from(
            "<IIQQQQIIQQ", data, shoff + i * shentsize)
        heads.append((name, typ, off, size, link, info, entsize))
    strtab = heads[shstrndx]
    def cstr(table, at):
        start = table[2] + at
        return data[start:data.index(b"\0", start)].decode()
    out = []
    for h in heads:
        out.append({"name": cstr(strtab, h[0]), "type": h[1], "bytes": data[h[2]:h[2] + h[3]] if h[1] != 8 else b"",
                    "link": h[4], "info": h[5], "entsize": h[6]})
    return out, heads, data, cstr


TU_HASH = re.compile(r"_(?:INTERNAL|GLOBAL__N_)_?[0-9a-f]+_\d+_[A-Za-z0-9_]+?_[0-9a-f]{8}")


def functions_of_cubin(path):
    """{function: (skeleton hash, code bytes, relocations, bank-4 map)} of a cubin.

    Bank 4 holds the addresses of the module's globals (strings, printf, a flag): its slots
    are numbered in the order the compiler met them, which moves when code moves between
    files. The bank-4 map says what each slot points at (a string by its text, a symbol by
    its name without the translation unit's hash), so two references are the same when
    they point at the same thing whatever their slot."""
    secs, heads, data, cstr = sections(path)
    symtab = next((s for s in secs if s["type"] == 2), None)  # SHT_SYMTAB
    syms = []
    if symtab:
        strsec = heads[symtab["link"]]
        for i in range(len(symtab["bytes"]) // 24):
            st_name, _, _, _, value, _ = struct.unpack_from("<IBBHQQ", symtab["bytes"], i * 24)
            syms.append((cstr(strsec, st_name), value))
    init = next((s["bytes"] for s in secs if s["name"] == ".nv.global.init"), b"")
    def target(sym):
        name, value = sym
        if name.startswith("$str"):
            return "string " + repr(init[value:init.index(b"\0", value)].decode(errors="replace"))
        return TU_HASH.sub("", name)
    def rows_of(s):
        size = 24 if s["type"] == 4 else 16
        for i in range(len(s["bytes"]) // size):
            off, info = struct.unpack_from("<QQ", s["bytes"], i * size)
            add = struct.unpack_from("<q", s["bytes"], i * size + 16)[0] if size == 24 else 0
            yield off, info & 0xFFFFFFFF, syms[info >> 32] if (info >> 32) < len(syms) else ("?", 0), add
    bank4 = {}
    for s in secs:
        if s["type"] in (4, 9) and s["name"] in (".rela.nv.constant4", ".rel.nv.constant4"):
            for off, typ, sym, add in rows_of(s):
                bank4[off] = (target(sym), add)
    relocs = {}
    for s in secs:
        if s["type"] in (4, 9) and s["name"].startswith((".rel.text.", ".rela.text.")):
            fn = s["name"].split(".text.", 1)[1]
            relocs[fn] = sorted((off, typ, target(sym), add) for off, typ, sym, add in rows_of(s))
    fns = {}
    for s in secs:
        if s["name"].startswith(".text."):
            fn = s["name"][len(".text."):]
            code = s["bytes"]
            # The skeleton: every instruction without bits 32-63 of its first word (where
            # constant-bank offsets and 32-bit immediates are), for pairing only.
            skel = b"".join(code[i:i + 4] + code[i + 8:i + 16] for i in range(0, len(code), 16))
            h = hashlib.sha256(skel + repr(relocs.get(fn, [])).encode()).hexdigest()
            fns[fn] = (h, code, relocs.get(fn, []), bank4)
    return fns


def same_code(b, h):
    """None when the code of two functions is the same, else the first difference. Two
    instructions differ only in a bank-4 reference to the same target (a constant-bank
    operand c[0x4][slot], or a slot offset as a 32-bit immediate) count as the same."""
    (_, cb, rb, mb), (_, ch, rh, mh) = b, h
    if len(cb) != len(ch):
        return f"{len(cb)} vs {len(ch)} bytes"
    if rb != rh:
        return "relocations differ"
    for i in range(0, len(cb), 16):
        if cb[i:i + 16] == ch[i:i + 16]:
            continue
        lo_b, hi_b = struct.unpack_from("<QQ", cb, i)
        lo_h, hi_h = struct.unpack_from("<QQ", ch, i)
        diff = lo_b ^ lo_h
        if hi_b == hi_h:
            cbank = lambda lo: (((lo >> 40) & 0x3FFF) * 4, (lo >> 54) & 0x1F)
            (ob, kb), (oh, kh) = cbank(lo_b), cbank(lo_h)
            if diff & ~(0x3FFF << 40) == 0 and kb == kh == 4 and ob in mb and mb.get(ob) == mh.get(oh):
                continue
            ib, ih = lo_b >> 32, lo_h >> 32
            if diff & 0xFFFFFFFF == 0 and ib in mb and mb.get(ib) == mh.get(ih):
                continue
        return f"instruction at 0x{i:04x}: {cb[i:i + 16].hex()} vs {ch[i:i + 16].hex()}"
    return None


ADDR = re.compile(r"/\*[0-9a-f]{4,}\*/")
ENC = re.compile(r"/\* 0x[0-9a-f]{16} \*/")
SYM = re.compile(r"\(\s*[_$.A-Za-z][\w$.@]*\s*\)|`\([^)]*\)")


def functions_of_sass(path):
    fns, name, body = {}, None, []
    def close():
        if name is not None:
            text = "\n".join(body)
            fns[name] = (hashlib.sha256(text.encode()).hexdigest(), text)
    for line in open(path, errors="replace"):
        m = re.match(r"\s*Function : (\S+)", line)
        if m:
            close()
            name, body = m.group(1), []
            continue
        if name is None:
            continue
        line = ENC.sub("", ADDR.sub("", line))
        line = SYM.sub("(SYM)", line).strip()
        if line and not line.startswith(".") and not line.startswith("-"):
            body.append(" ".join(line.split()))
    close()
    return fns


# cuobjdump prints slot 0 as the zero register: c[0x4][RZ].
SLOT = re.compile(r"c\[0x4\]\[(0x[0-9a-f]+|RZ)\]")
IMM = re.compile(r"(?<![\w\[])(0x[0-9a-f]+)(?![\w\]])")


def same_listing(text_b, text_h, bank_b, bank_h):
    """None when two cuobjdump listings of one function say the same, else the first line
    that differs; bank-4 references to the same target (c[0x4][slot], or a slot offset as an
    immediate) count as the same, as in same_code."""
    lb, lh = text_b.split("\n"), text_h.split("\n")
    if len(lb) != len(lh):
        return f"{len(lb)} vs {len(lh)} instructions"
    def canon(line, bank):
        slot = lambda text: 0 if text == "RZ" else int(text, 16)
        line = SLOT.sub(lambda m: "c[0x4][" + repr(bank.get(slot(m.group(1)), m.group(1))) + "]", line)
        return IMM.sub(lambda m: repr(bank[int(m.group(1), 16)]) if int(m.group(1), 16) in bank else m.group(1), line)
    for a, b in zip(lb, lh):
        if a != b and canon(a, bank_b) != canon(b, bank_h):
            return f"'{a}' vs '{b}'"
    return None


def demangle(names):
    try:
        import subprocess
        out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True).stdout
        return dict(zip(names, out.splitlines()))
    except OSError:
        return {n: n for n in names}


def compare(base, head, label, verify=None):
    """(outcome, lines, pairs) for two {function: (hash, ...)} maps: functions are paired
    by hash (and, with `verify`, only when verify(b, h) finds no difference). The outcome is
    "identical", "removed" (every function after has its identical one before, but some
    before are no longer built: say which, since a kernel can vanish because nothing launches
    it any more) or "different"."""
    unpaired_head = dict(head)
    missing, why, pairs = [], {}, {}
    for f, fb in base.items():
        match = None
        for g, fh in unpaired_head.items():
            if fh[0] != fb[0]:
                continue
            problem = verify(fb, fh) if verify else None
            if problem is None:
                match = g
                break
            why.setdefault(f, problem)
        if match is None:
            missing.append(f)
        else:
            pairs[f] = match
            del unpaired_head[match]
    added = list(unpaired_head)
    if not missing and not added:
        return "identical", [f"{label}: identical ({len(base)} functions)"], pairs
    names = demangle(missing + added)
    size = lambda v: len(v[1])
    if not added:
        lines = [f"{label}: REMOVED: the {len(head)} functions after are identical to ones before; "
                 f"{len(missing)} before are no longer built"]
        lines += [f"    no longer built: {names.get(f, f)} ({size(base[f])} bytes)" for f in missing]
        return "removed", lines, pairs
    lines = [f"{label}: DIFFERENT: {len(missing)} of {len(base)} functions have no identical counterpart"]
    lines += [f"    only before: {names.get(f, f)} ({size(base[f])} bytes){': ' + why[f] if f in why else ''}"
              for f in missing]
    lines += [f"    only after:  {names.get(f, f)} ({size(head[f])} bytes)" for f in added]
    return "different", lines, pairs


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    base_dir, head_dir = sys.argv[1:]
    builds = sorted(f[:-len(".cubin")] for f in os.listdir(base_dir) if f.endswith(".cubin"))
    all_same, any_removed, counted = True, False, 0
    for b in builds:
        hb, bb = os.path.join(head_dir, b + ".cubin"), os.path.join(base_dir, b + ".cubin")
        if not os.path.exists(hb):
            print(f"{b}: not built after"); all_same = False; continue
        counted += 1
        cb, ch = functions_of_cubin(bb), functions_of_cubin(hb)
        outcome, lines, pairs = compare(cb, ch, b + " [machine code]", same_code)
        same = outcome != "different"
        any_removed |= outcome == "removed"
        all_same &= same
        print("\n".join(lines))
        sb, sh = os.path.join(base_dir, b + ".sass"), os.path.join(head_dir, b + ".sass")
        if os.path.exists(sb) and os.path.exists(sh):
            lb, lh = functions_of_sass(sb), functions_of_sass(sh)
            bad = []
            for f, g in pairs.items():
                problem = "no listing" if f not in lb or g not in lh else same_listing(lb[f][1], lh[g][1], cb[f][3], ch[g][3])
                if problem:
                    bad.append(f"    {demangle([f])[f]}: {problem}")
            if len(lb) != len(cb) or len(lh) != len(ch):
                bad.append(f"    the listings have {len(lb)} and {len(lh)} functions, the cubins {len(cb)} and {len(ch)}")
            if bad or not same:
                all_same = False
                print(f"{b} [cuobjdump -sass]: DIFFERENT" + ("" if bad else " (see the machine code)"))
                print("\n".join(bad))
            else:
                print(f"{b} [cuobjdump -sass]: identical ({len(pairs)} functions, listings compared line by line)")
    if not all_same:
        print(f"DIFFERENT: {counted} builds compared")
        return 1
    if any_removed:
        print(f"IDENTICAL BUT FOR FUNCTIONS NO LONGER BUILT (listed above): {counted} builds compared")
        return 2
    print(f"IDENTICAL: {counted} builds compared")
    return 0


if __name__ == "__main__":
    sys.exit(main())
