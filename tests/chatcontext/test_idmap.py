"""MessageIdMap (build-context.md §5)."""

from __future__ import annotations

from chatcontext.core.idmap import MessageIdMap


def test_s45_bc5_01_02_register_resolve_and_key_shape() -> None:
    id_map = MessageIdMap()
    assert id_map.register("A", "ref") == "ref_1"
    assert id_map.register("B", "ref") == "ref_2"
    assert id_map.register("A", "ref") == "ref_1"
    assert id_map.register("A", "media") == "media_1"
    assert id_map.resolve("ref_2") == "B"
    assert id_map.resolve("media_1") == "A"
    assert id_map.resolve("ref_9") is None
    assert MessageIdMap.is_opaque_key("ref_x") is False
    assert MessageIdMap.is_opaque_key("media_12") is True
    assert MessageIdMap.is_opaque_key("ref_1 ") is False


def test_bc5_02_get_opaque_per_prefix() -> None:
    id_map = MessageIdMap()
    id_map.register("A", "media")
    assert id_map.get_opaque("A", "media") == "media_1"
    assert id_map.get_opaque("A", "ref") is None


def test_bc5_04_as_dict_keeps_registration_order_across_prefixes() -> None:
    id_map = MessageIdMap()
    id_map.register("X", "media")
    id_map.register("Y", "ref")
    id_map.register("Z", "media")
    assert list(id_map.as_dict().items()) == [("media_1", "X"), ("ref_1", "Y"), ("media_2", "Z")]
    assert len(id_map) == 3
