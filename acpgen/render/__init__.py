"""Layer 3, render: the Jinja environment, the filters that turn schema text into safe Python
literals, black-compatible line fitting, and the templates themselves (``templates/``)."""
