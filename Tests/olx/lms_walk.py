"""A small walk over an OLX export that names blocks as the LMS's XML import does.

Written from the import code of openedx-platform (xmodule/modulestore/xml.py: process_xml,
make_name_unique, fallback_name; xmodule/xml_block.py: the parser, pointer tags; the
containers' definition_from_xml) as a reference for coursepack's usage ids. It models only
what decides ids: the parser's options, the order of name attributes and their cleaning, the
SHA-1 of a child as its parent serialises it, the renaming of reused names, pointer files.
"""
import hashlib
import re
from collections import defaultdict
from pathlib import Path

from lxml import etree

# The import's parser: no DTD, blank text removed, comments kept.
PARSER = etree.XMLParser(dtd_validation=False, load_dtd=False, remove_blank_text=True)

# Tags whose reused names the import replaces by a content hash (they keep learner state).
RENAMED_WHEN_REUSED = {"problem", "sequential", "video", "course", "chapter", "poll_question", "vertical"}
# Blocks whose children are blocks (SequenceBlock and its kin, VerticalBlock, ConditionalBlock,
# SplitTestBlock, LibraryContentBlock).
CONTAINERS = {"course", "chapter", "sequential", "videosequence", "vertical", "conditional", "split_test", "library_content"}
# Containers that serialise each child with etree.tostring(child) (ASCII bytes) rather than
# etree.tostring(child, encoding='unicode').
ASCII_CHILDREN = {"split_test", "library_content"}
# Child elements a container reads as its own settings, not as blocks.
SETTINGS = {"course": {"textbook", "wiki"}, "conditional": {"show"}}


def clean(value):
    """opaque-keys' BlockUsageLocator.clean."""
    return re.sub("_+", "_", re.sub(r"[^\w.%-]", "_", value, flags=re.UNICODE))


class LMSWalk:
    def __init__(self, root):
        self.root = Path(root)
        self.used = defaultdict(set)
        # (type, url_name) in the order the import names them (parents before children).
        self.blocks = []

    def run(self):
        course = etree.parse(str(self.root / "course.xml"), parser=PARSER).getroot()
        self.process(etree.tostring(course, encoding="unicode"))
        return self.blocks

    def name(self, node, xml):
        """make_name_unique: the name the import gives the node, set as its url_name."""
        tag, attrib = node.tag, node.attrib
        url_name = None
        for key, cleaner, remove in (("url_name", None, False), ("slug", None, True),
                                     ("name", clean, False), ("display_name", clean, False)):
            if key in attrib:
                url_name = cleaner(attrib[key]) if cleaner else attrib[key]
                if remove:
                    del attrib[key]
                break

        def fallback(original=None):
            if original is not None and original.startswith(tag) and re.search("[0-9a-fA-F]{12}$", original):
                original = original[len(tag) + 1:-12]
            original = "_" + original if original not in (None, "") else ""
            data = xml if isinstance(xml, bytes) else xml.encode("utf-8")
            return tag + original + "_" + hashlib.sha1(data).hexdigest()[:12]

        if not url_name:
            url_name = fallback()
        if url_name in self.used[tag] and tag in RENAMED_WHEN_REUSED:
            url_name = fallback(url_name)
        self.used[tag].add(url_name)
        node.set("url_name", url_name)
        return url_name

    @staticmethod
    def is_pointer(node):
        expected = {"url_name", "course", "org"} if node.tag == "course" else {"url_name"}
        has_text = node.text is not None and node.text.strip() != ""
        return len(node) == 0 and set(node.attrib.keys()) == expected and not has_text

    def definition(self, node, url_name):
        """The element holding the block's content; None where the import makes an error block."""
        if self.is_pointer(node):
            path = self.root / node.tag / (url_name.replace(":", "/") + ".xml")
            if not path.is_file():
                return None
            node = etree.parse(str(path), parser=PARSER).getroot()
        filename = node.get("filename")
        if filename is not None and node.tag != "html":
            path = self.root / node.tag / (filename if filename.endswith(".xml") else filename + ".xml")
            if not path.is_file():
                return None
            loaded = etree.parse(str(path), parser=PARSER).getroot()
            loaded.attrib.update(node.attrib)
            node = loaded
        return node

    def process(self, xml):
        try:
            node = etree.fromstring(xml, PARSER)
        except etree.XMLSyntaxError:
            return  # an error block in the LMS
        url_name = self.name(node, xml)
        try:
            definition = self.definition(node, url_name)
        except etree.XMLSyntaxError:
            definition = None
        if definition is None:
            return  # an error block under an id of its own; the name stays taken
        self.blocks.append((node.tag, url_name))
        if node.tag not in CONTAINERS:
            return
        meta = definition.find("meta")
        if meta is not None:
            definition.remove(meta)
        skipped = SETTINGS.get(node.tag, set())
        for child in list(definition):
            if not isinstance(child.tag, str) or child.tag in skipped:
                continue  # comments and instructions load as nothing
            if node.tag in ASCII_CHILDREN:
                self.process(etree.tostring(child))
            else:
                self.process(etree.tostring(child, encoding="unicode"))


def usage_ids(root):
    """The import's blocks as (type, url_name), distinct, in import order."""
    seen, out = set(), []
    for block in LMSWalk(root).run():
        if block not in seen:
            seen.add(block)
            out.append(block)
    return out
