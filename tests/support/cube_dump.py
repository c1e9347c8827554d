"""pycubexr's view of a .cubex profile, as JSON on stdout.

Usage: /usr/bin/python3 cube_dump.py PROFILE.cubex

Doubles are given as the integer of their IEEE bits, so the Rust side compares them exactly.
For every metric and call path: the stored values per location ("raw"), and for the metrics
pycubexr can convert (sums: not MINDOUBLE/MAXDOUBLE) its inclusive and exclusive views.
"""
import json
import struct
import sys

from pycubexr import CubexParser


def number(x):
    if isinstance(x, float) or type(x).__name__.startswith("float"):
        return {"f64_bits": struct.unpack("<Q", struct.pack("<d", float(x)))[0]}
    return int(x)


def row(values):
    if hasattr(values, "astype") and not hasattr(values, "dtype"):
        values = values.astype(float)  # MinValues / MaxValues
    return [number(v) for v in values]


def main(path):
    out = {}
    with CubexParser(path) as cube:
        metrics = []

        def walk_metrics(ms, parent):
            for m in ms:
                metrics.append({
                    "id": m.id,
                    "name": m.name,
                    "display_name": m.display_name,
                    "type": m.metric_type,
                    "dtype": m.data_type,
                    "units": m.units,
                    "description": m.description,
                    "parent": parent,
                })
                walk_metrics(m.childs, m.name)

        walk_metrics(cube.get_metrics(), None)
        out["metrics"] = metrics

        cnodes = []

        def walk_cnodes(cnode):
            region = cube.get_region(cnode)
            cnodes.append({
                "id": cnode.id,
                "region": region.name,
                "parent": cnode.parent.id if cnode.parent is not None else None,
                "children": [c.id for c in cnode.get_children()],
            })
            for child in cnode.get_children():
                walk_cnodes(child)

        for root in cube.get_root_cnodes():
            walk_cnodes(root)
        out["cnodes"] = cnodes

        out["regions"] = [{
            "name": r.name,
            "mangled_name": r.mangled_name,
            "mod": r.mod,
            "begin": r.begin,
            "end": r.end,
            "paradigm": r.paradigm,
            "role": r.role,
            "description": r.description,
        } for r in cube._anchor_result.regions]

        out["locations"] = [{
            "id": loc.id,
            "name": loc.name,
            "rank": int(loc.rank),
            "type": loc.type,
        } for loc in cube.get_locations()]

        groups = []

        def walk_system(node, path):
            here = path + [node.name]
            for group in node._location_group_children:
                groups.append({
                    "path": here,
                    "name": group.name,
                    "rank": int(group.rank),
                    "type": group.type,
                    "locations": [loc.id for loc in group.all_locations()],
                })
            for child in node._system_tree_node_children:
                walk_system(child, here)

        for root in cube._anchor_result.system_tree_nodes:
            walk_system(root, [])
        out["groups"] = groups

        all_cnodes = cube.all_cnodes()
        values = {}
        for metric in cube.all_metrics():
            mv = cube.get_metric_values(metric)
            per_metric = {"raw": {}}
            convertible = metric.data_type not in ("MINDOUBLE", "MAXDOUBLE")
            if convertible:
                per_metric["inclusive"] = {}
                per_metric["exclusive"] = {}
            for cnode in all_cnodes:
                key = str(cnode.id)
                per_metric["raw"][key] = row(mv.cnode_values(cnode))
                if convertible:
                    per_metric["inclusive"][key] = row(mv.cnode_values(cnode, convert_to_inclusive=True))
                    per_metric["exclusive"][key] = row(mv.cnode_values(cnode, convert_to_exclusive=True))
            values[metric.name] = per_metric
        out["values"] = values
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
