from typing import cast

from rest_framework import serializers

from taxonomy.models import Example, Node, Taxonomy


class ExampleOut(serializers.ModelSerializer):
    class Meta:
        model = Example
        fields = ("kind", "text")


class NodeOut(serializers.ModelSerializer):
    # DRF's metaclass takes declared fields off the class; the stubs see `Field.parent` clash.
    parent: serializers.SlugRelatedField[Node] = serializers.SlugRelatedField(  # type: ignore[assignment]
        slug_field="code", read_only=True, allow_null=True
    )
    examples = ExampleOut(many=True, read_only=True)

    class Meta:
        model = Node
        fields = ("id", "code", "level", "name", "definition", "parent", "retired_at", "examples")


class TreeNodeOut(serializers.Serializer):
    id = serializers.IntegerField(source="node.pk")
    code = serializers.CharField(source="node.code")
    level = serializers.CharField(source="node.level")
    name = serializers.CharField(source="node.name")
    definition = serializers.CharField(source="node.definition")
    retired_at = serializers.DateTimeField(source="node.retired_at", allow_null=True)
    examples = ExampleOut(source="node.examples.all", many=True)
    children = serializers.SerializerMethodField()

    def get_children(self, obj) -> list[dict]:
        # many=True makes a ListSerializer: its data is a list (the stubs say ReturnDict).
        return cast(list[dict], TreeNodeOut(obj.children, many=True).data)


class TaxonomyOut(serializers.ModelSerializer):
    class Meta:
        model = Taxonomy
        fields = ("id", "name", "version", "description", "created_at")
