"""``recipe_user_metadata`` (tinker_cookbook/utils/git_rev.py): the ServiceClient's user_metadata,
so every training run on Tinker names its recipe and the cookbook version."""
from tinker_cookbook import __version__


def recipe_user_metadata(recipe_name: str) -> dict[str, str]:
    return {"recipe_name": recipe_name, "git_rev": __version__}
