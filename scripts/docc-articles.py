#!/usr/bin/env python3
"""Writes the DocC articles of the SkerryCore and Skerry catalogs from the guides in docs/.

The guides in docs/ are the source: each article is its guide with the links rewritten for DocC
(a guide of the same catalog becomes <doc:Name>, any other link keeps only its text) and the
example markers dropped. Run it after changing a guide:

    python3 scripts/docc-articles.py          # rewrite the articles
    python3 scripts/docc-articles.py --check  # exit 1 if an article differs from its guide
    python3 scripts/docc-articles.py --into DIR  # write into copies DIR/SkerryCore.docc, DIR/Skerry.docc

scripts/build-docs.sh builds from fresh copies (--into), so the published documentation always
follows the guides, whose code a test checks against the tests' code.
"""
import os, re, sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
catalogs = {
    "SkerryCore": os.path.join(root, "Sources/SkerryCore/SkerryCore.docc"),
    "Skerry": os.path.join(root, "Sources/Skerry/Skerry.docc"),
}
# guide file -> (catalog, article name)
guides = {
    "getting-started.md": ("SkerryCore", "GettingStarted"),
    "contexts.md": ("SkerryCore", "Contexts"),
    "queries.md": ("SkerryCore", "Queries"),
    "stores.md": ("SkerryCore", "Stores"),
    "models-and-migrations.md": ("SkerryCore", "ModelsAndMigrations"),
    "services.md": ("SkerryCore", "Services"),
    "performance.md": ("SkerryCore", "Performance"),
    "postgres.md": ("SkerryCore", "PostgreSQL"),
    "several-instances.md": ("SkerryCore", "SeveralInstances"),
    "public-api.md": ("SkerryCore", "PublicAPI"),
    "typed-layer.md": ("Skerry", "TypedLayer"),
    "names.md": ("Skerry", "Names"),
}
link = re.compile(r"(!?)\[([^\]]+)\]\(([^)\s]+)\)")

def article(guide, catalog):
    text = open(os.path.join(root, "docs", guide), encoding="utf-8").read()
    text = re.sub(r"^<!-- example: .* -->\n", "", text, flags=re.M)

    def rewrite(match):
        image, label, target = match.groups()
        if image:
            return match.group(0)          # images are copied into the catalog's Resources
        name = guides.get(target.split("#")[0])
        if name and name[0] == catalog and "#" not in target:
            return f"<doc:{name[1]}>"
        if target.startswith("https://"):
            return match.group(0)
        return label
    text = link.sub(rewrite, text)
    footer = f"\n<!-- Generated from docs/{guide} by scripts/docc-articles.py: edit the guide, not this file. -->\n"
    return text.rstrip("\n") + "\n" + footer

def main():
    check = "--check" in sys.argv
    if "--into" in sys.argv:
        into = sys.argv[sys.argv.index("--into") + 1]
        for module in catalogs:
            catalogs[module] = os.path.join(into, module + ".docc")
    stale = []
    for guide, (catalog, name) in guides.items():
        path = os.path.join(catalogs[catalog], name + ".md")
        wanted = article(guide, catalog)
        current = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        if current != wanted:
            stale.append(os.path.relpath(path, root))
            if not check:
                with open(path, "w", encoding="utf-8") as out:
                    out.write(wanted)
    resources = os.path.join(catalogs["SkerryCore"], "Resources")
    for name in ("memory-io.svg", "memory-io-postgres.svg"):
        image = os.path.join(root, "docs", name)
        copy = os.path.join(resources, name)
        if open(image, "rb").read() != (open(copy, "rb").read() if os.path.exists(copy) else None):
            stale.append(os.path.relpath(copy, root))
            if not check:
                os.makedirs(resources, exist_ok=True)
                open(copy, "wb").write(open(image, "rb").read())
    if check and stale:
        print("docc-articles: out of date (run python3 scripts/docc-articles.py): " + ", ".join(stale), file=sys.stderr)
        sys.exit(1)
    if not check:
        print("docc-articles: " + (f"wrote {', '.join(stale)}" if stale else "up to date"))

main()
