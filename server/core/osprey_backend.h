// The Osprey engine backend: each instance is its own osprey::Session; a batch of requests
// runs as one Session::run with inputs concatenated along dim 0.
#pragma once

#include "core/backend.h"

namespace osprey::server {

// Engine threads per instance: the config's `threads` parameter if set, else the version's
// thread budget divided among its instances (at least 1), so instances never oversubscribe.
int threads_per_instance(int parameter_threads, int total_threads, int instances);

class OspreyBackend : public Backend {
 public:
  Result<std::unique_ptr<LoadedModel>> load(const VersionSource& source,
                                            const BackendOptions& options) override;
};

}  // namespace osprey::server
