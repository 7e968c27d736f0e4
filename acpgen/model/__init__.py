"""Layer 2, model: turn a loaded schema into plain frozen data that makes every decision.

The method table (:mod:`.method_table`, rows :class:`.spec.Method`), the type model
(:mod:`.types`, built by :mod:`.typebuild`), the names both use (:mod:`.naming`, :mod:`.names`),
what a ``--side`` / ``--stable-only`` run keeps (:mod:`.selection`, :mod:`.roles`), all gathered
in :class:`.spec.Spec`. Templates print these values; they decide nothing.
"""
