// Rodinia-style breadth-first search: two kernels per BFS level.
extern "C" __global__ void bfs_expand(const int* starts, const int* counts, const int* edges,
                                      int* mask, int* updating, const int* visited, int* cost,
                                      int n) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (tid < n && mask[tid]) {
    mask[tid] = 0;
    for (int i = starts[tid]; i < starts[tid] + counts[tid]; i++) {
      int id = edges[i];
      if (!visited[id]) {
        cost[id] = cost[tid] + 1;
        updating[id] = 1;
      }
    }
  }
}

extern "C" __global__ void bfs_update(int* mask, int* updating, int* visited, int* over, int n) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (tid < n && updating[tid]) {
    mask[tid] = 1;
    visited[tid] = 1;
    *over = 1;
    updating[tid] = 0;
  }
}
