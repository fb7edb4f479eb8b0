// tag::plugin-type[]
package io.refpool.core.guide;

/** A plugin: runs scripts for tenants through the host, on threads of its own. */
@FunctionalInterface
public interface Plugin {
    void start(TenantHost host);
}
// end::plugin-type[]
