// Server/model metadata, statistics and repository index -> their gRPC response messages.
#pragma once

#include <vector>

#include "api/types.h"
#include "osprey_server/grpc_service.pb.h"

namespace osprey::server::grpc_frontend {

void encode_server_metadata(const ServerMetadata& in, inference::ServerMetadataResponse* out);
void encode_model_metadata(const ModelMetadata& in, inference::ModelMetadataResponse* out);
void encode_statistics(const std::vector<ModelStats>& in, inference::ModelStatisticsResponse* out);
void encode_repository_index(const std::vector<RepositoryEntry>& in,
                             inference::RepositoryIndexResponse* out);

}  // namespace osprey::server::grpc_frontend
