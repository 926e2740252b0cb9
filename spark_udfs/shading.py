"""The Jackson that the Iceberg Spark runtime of PyPI's snowpark-connect-deps-iceberg expects but leaves out.

That runtime jar refers to Jackson under Iceberg's shaded prefix (`org.apache.iceberg.shaded.com.fasterxml.
jackson`) without carrying those classes, so Spark fails on the first table it opens (NoClassDefFoundError:
.../shaded/com/fasterxml/jackson/core/JsonFactoryBuilder). With no Maven repository to fetch the complete jar
from, the same relocation the Iceberg build applies is applied here to the Jackson jars PySpark ships: every
class moves under the prefix, and every name in every class's constant pool that starts with `com/fasterxml/
jackson/` (or its dotted form, for reflection) is rewritten. Constant-pool entries are reached by index, so
strings may change length without touching the rest of a class file.
"""

from __future__ import annotations

import struct
import zipfile
from pathlib import Path

ORIGINAL, SHADED = "com/fasterxml/jackson/", "org/apache/iceberg/shaded/com/fasterxml/jackson/"
JACKSON_JARS = ("jackson-core", "jackson-databind", "jackson-annotations")
CONSTANT_SIZES = {
    3: 4,
    4: 4,
    5: 8,
    6: 8,
    7: 2,
    8: 2,
    9: 4,
    10: 4,
    11: 4,
    12: 4,
    15: 3,
    16: 2,
    17: 4,
    18: 4,
    19: 2,
    20: 2,
}
FIXED_TIME = (1980, 1, 1, 0, 0, 0)  # the same bytes on every machine, so the jar's sha256 can be compared


def relocated_text(text: bytes) -> bytes:
    for original, shaded in ((ORIGINAL, SHADED), (ORIGINAL.replace("/", "."), SHADED.replace("/", "."))):
        text = text.replace(original.encode(), shaded.encode())
    return text


def relocated_class(data: bytes) -> bytes:
    """A class file whose constant-pool strings name the shaded Jackson."""
    (count,) = struct.unpack_from(">H", data, 8)
    out, at, index = [data[:10]], 10, 1
    while index < count:
        tag = data[at]
        if tag == 1:
            (length,) = struct.unpack_from(">H", data, at + 1)
            text = relocated_text(data[at + 3 : at + 3 + length])
            out.append(struct.pack(">BH", 1, len(text)) + text)
            at += 3 + length
        else:
            size = CONSTANT_SIZES[tag]
            out.append(data[at : at + 1 + size])
            at += 1 + size
        index += 2 if tag in (5, 6) else 1  # a long or a double takes two slots
    out.append(data[at:])
    return b"".join(out)


def relocated_name(name: str) -> str:
    if name.startswith(ORIGINAL):
        return SHADED + name[len(ORIGINAL) :]
    if name.startswith("META-INF/services/"):
        return relocated_text(name.encode()).decode()
    return name


def write_shaded_jackson(jars: list[Path], target: Path) -> Path:
    """One jar holding the classes of `jars`, relocated under Iceberg's shaded prefix."""
    partial = target.with_suffix(".partial")
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as out:
        written = set()
        for jar in jars:
            with zipfile.ZipFile(jar) as source:
                for entry in sorted(source.namelist()):
                    keep = entry.startswith((ORIGINAL, "META-INF/services/com.fasterxml.jackson."))
                    name = relocated_name(entry)
                    if not keep or entry.endswith("/") or name in written:
                        continue
                    data = source.read(entry)
                    data = relocated_class(data) if entry.endswith(".class") else relocated_text(data)
                    out.writestr(zipfile.ZipInfo(name, FIXED_TIME), data)
                    written.add(name)
    partial.replace(target)
    return target


def pyspark_jackson_jars() -> list[Path]:
    """Jackson core, databind and annotations as PySpark ships them (pyspark/jars/)."""
    import pyspark

    folder = Path(pyspark.__file__).parent / "jars"
    found = [next(folder.glob(f"{name}-2*.jar"), None) for name in JACKSON_JARS]
    return [jar for jar in found if jar is not None]
