"""The work mutations: on tasks (`tasks`), and by and on attempts (`attempts`)."""
