"""What a traced program holds, for the tests that check which
primitives a lowering leaves in it."""
import jax
import jax.extend.core


def primitives(jaxpr: jax.extend.core.Jaxpr) -> set[str]:
    """The names of every primitive in `jaxpr`, its sub-jaxprs included."""
    names = set()
    for eqn in jaxpr.eqns:
        names.add(eqn.primitive.name)
        for sub in jax.extend.core.jaxprs_in_params(eqn.params):
            names |= primitives(sub)
    return names
