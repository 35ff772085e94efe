"""Prompt records (design.md): one assembled turn as the model saw it, with its snapshot; their store,
inspector, API, admin and live feed."""
