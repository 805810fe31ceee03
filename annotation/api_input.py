"""Input checking shared by the API modules of every feature package."""


def validated(serializer_class, data) -> dict:
    """`data` checked by `serializer_class`; a bad field is a 400 in the API's error shape."""
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data
