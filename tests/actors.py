"""The actor of writes a test makes through ``personas.actions`` to set up or exercise a case."""

from personas.actions import Actor

TEST_ACTOR = Actor.system("test")
