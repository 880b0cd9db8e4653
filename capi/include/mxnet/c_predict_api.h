/* MXNet's C predict API (mxnet/c_predict_api.h of MXNet 1.9.1), implemented by symbind's
 * libmxnet.so. Every function returns 0 on success and -1 on failure; MXGetLastError() then
 * gives the message of the calling thread's last failure. Which calls may run concurrently:
 * docs/concurrency.md. */
#ifndef MXNET_C_PREDICT_API_H_
#define MXNET_C_PREDICT_API_H_

#include "c_api_base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef void* PredictorHandle;
typedef void* NDListHandle;
/* Called after a forward pass once per node output: name, array, user handle. */
typedef void (*PredMonitorCallback)(const char*, NDArrayHandle, void*);

MXNET_DLL int MXPredCreate(const char* symbol_json_str, const void* param_bytes, int param_size,
                           int dev_type, int dev_id, uint32_t num_input_nodes,
                           const char** input_keys, const uint32_t* input_shape_indptr,
                           const uint32_t* input_shape_data, PredictorHandle* out);

MXNET_DLL int MXPredCreateEx(const char* symbol_json_str, const void* param_bytes,
                             int param_size, int dev_type, int dev_id,
                             const uint32_t num_input_nodes, const char** input_keys,
                             const uint32_t* input_shape_indptr,
                             const uint32_t* input_shape_data,
                             const uint32_t num_provided_arg_dtypes,
                             const char** provided_arg_dtype_names,
                             const int* provided_arg_dtypes, PredictorHandle* out);

MXNET_DLL int MXPredCreatePartialOut(const char* symbol_json_str, const void* param_bytes,
                                     int param_size, int dev_type, int dev_id,
                                     uint32_t num_input_nodes, const char** input_keys,
                                     const uint32_t* input_shape_indptr,
                                     const uint32_t* input_shape_data,
                                     uint32_t num_output_nodes, const char** output_keys,
                                     PredictorHandle* out);

/* num_threads predictors over ONE shared copy of the parameters; each may run in its own
 * thread concurrently with the others. num_threads is 1 to MXPRED_MAX_THREADS; the
 * predictors' buffers together are bounded by the process-wide bind budget
 * (SYMBIND_MAX_BIND_BYTES). */
#define MXPRED_MAX_THREADS 1024
MXNET_DLL int MXPredCreateMultiThread(const char* symbol_json_str, const void* param_bytes,
                                      int param_size, int dev_type, int dev_id,
                                      uint32_t num_input_nodes, const char** input_keys,
                                      const uint32_t* input_shape_indptr,
                                      const uint32_t* input_shape_data, int num_threads,
                                      PredictorHandle* out);

MXNET_DLL int MXPredReshape(uint32_t num_input_nodes, const char** input_keys,
                            const uint32_t* input_shape_indptr,
                            const uint32_t* input_shape_data, PredictorHandle handle,
                            PredictorHandle* out);

MXNET_DLL int MXPredGetOutputShape(PredictorHandle handle, uint32_t index,
                                   uint32_t** shape_data, uint32_t* shape_ndim);

MXNET_DLL int MXPredGetOutputType(PredictorHandle handle, uint32_t out_index, int* out_dtype);

MXNET_DLL int MXPredSetInput(PredictorHandle handle, const char* key, const float* data,
                             uint32_t size);

MXNET_DLL int MXPredForward(PredictorHandle handle);

MXNET_DLL int MXPredPartialForward(PredictorHandle handle, int step, int* step_left);

MXNET_DLL int MXPredGetOutput(PredictorHandle handle, uint32_t index, float* data,
                              uint32_t size);

MXNET_DLL int MXPredFree(PredictorHandle handle);

MXNET_DLL int MXNDListCreate(const char* nd_file_bytes, int nd_file_size, NDListHandle* out,
                             uint32_t* out_length);

MXNET_DLL int MXNDListGet(NDListHandle handle, uint32_t index, const char** out_key,
                          const float** out_data, const uint32_t** out_shape,
                          uint32_t* out_ndim);

MXNET_DLL int MXPredSetMonitorCallback(PredictorHandle handle, PredMonitorCallback callback,
                                       void* callback_handle, bool monitor_all);

MXNET_DLL int MXNDListFree(NDListHandle handle);

#ifdef __cplusplus
}
#endif

#endif /* MXNET_C_PREDICT_API_H_ */
