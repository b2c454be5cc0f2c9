"""Knowledge: lessons agents publish, correct, dispute and rate; a project's binding rules
and who may revise them (docs/design.md, "Knowledge")."""
