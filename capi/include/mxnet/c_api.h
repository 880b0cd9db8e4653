/* MXNet's C API (mxnet/c_api.h of MXNet 1.9.1): the functions MXNet's cpp-package calls,
 * implemented by symbind's libmxnet.so over symbind's runtime. Same signatures and error
 * convention: 0 on success, -1 on failure with the message in MXGetLastError() (per thread).
 * What is not supported, and the error it gives: docs/coming-from-mxnet.md. */
#ifndef MXNET_C_API_H_
#define MXNET_C_API_H_

#include <stddef.h>

#include "c_api_base.h"

#ifdef __cplusplus
#define DEFAULT(x) = x
#else
#define DEFAULT(x)
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef int64_t dim_t;
typedef const void* FunctionHandle;
typedef void* AtomicSymbolCreator;
typedef void* CachedOpHandle;
typedef void* SymbolHandle;
typedef void* AtomicSymbolHandle;
typedef void* ExecutorHandle;
typedef void* DataIterCreator;
typedef void* DataIterHandle;
typedef void* KVStoreHandle;
typedef void* RecordIOHandle;
typedef const void* ContextHandle;
typedef void (*ExecutorMonitorCallback)(const char*, NDArrayHandle, void*);
typedef void(MXKVStoreUpdater)(int key, NDArrayHandle recv, NDArrayHandle local, void* handle);
typedef void(MXKVStoreStrUpdater)(const char* key, NDArrayHandle recv, NDArrayHandle local,
                                  void* handle);
typedef void(MXKVStoreServerController)(int head, const char* body, void* controller_handle);

MXNET_DLL int MXDataIterBeforeFirst(DataIterHandle handle);
MXNET_DLL int MXDataIterCreateIter(DataIterCreator handle, uint32_t num_param, const char **keys,
    const char **vals, DataIterHandle *out);
MXNET_DLL int MXDataIterFree(DataIterHandle handle);
MXNET_DLL int MXDataIterGetData(DataIterHandle handle, NDArrayHandle *out);
MXNET_DLL int MXDataIterGetIndex(DataIterHandle handle, uint64_t **out_index, uint64_t *out_size);
MXNET_DLL int MXDataIterGetIterInfo(DataIterCreator creator, const char **name, const char
    **description, uint32_t *num_args, const char ***arg_names, const char ***arg_type_infos, const
    char ***arg_descriptions);
MXNET_DLL int MXDataIterGetLabel(DataIterHandle handle, NDArrayHandle *out);
MXNET_DLL int MXDataIterGetPadNum(DataIterHandle handle, int *pad);
MXNET_DLL int MXDataIterNext(DataIterHandle handle, int *out);
MXNET_DLL int MXExecutorBackward(ExecutorHandle handle, uint32_t len, NDArrayHandle *head_grads);
MXNET_DLL int MXExecutorBindEX(SymbolHandle symbol_handle, int dev_type, int dev_id, uint32_t
    num_map_keys, const char** map_keys, const int* map_dev_types, const int* map_dev_ids, uint32_t
    len, NDArrayHandle *in_args, NDArrayHandle *arg_grad_store, uint32_t *grad_req_type, uint32_t
    aux_states_len, NDArrayHandle *aux_states, ExecutorHandle shared_exec, ExecutorHandle *out);
MXNET_DLL int MXExecutorForward(ExecutorHandle handle, int is_train);
MXNET_DLL int MXExecutorFree(ExecutorHandle handle);
MXNET_DLL int MXExecutorOutputs(ExecutorHandle handle, uint32_t *out_size, NDArrayHandle **out);
MXNET_DLL int MXExecutorPrint(ExecutorHandle handle, const char **out_str);
MXNET_DLL int MXExecutorSetMonitorCallbackEX(ExecutorHandle handle, ExecutorMonitorCallback
    callback, void *callback_handle, bool monitor_all);
MXNET_DLL int MXGenBackendSubgraph(SymbolHandle sym_handle, const char *backend, SymbolHandle
    *ret_sym_handle);
MXNET_DLL int MXGetGPUCount(int* out);
MXNET_DLL int MXGetVersion(int *out);
MXNET_DLL int MXImperativeInvoke(AtomicSymbolCreator creator, int num_inputs, NDArrayHandle *inputs,
    int *num_outputs, NDArrayHandle **outputs, int num_params, const char **param_keys, const char
    **param_vals);
MXNET_DLL int MXKVStoreBarrier(KVStoreHandle handle);
MXNET_DLL int MXKVStoreCreate(const char *type, KVStoreHandle *out);
MXNET_DLL int MXKVStoreFree(KVStoreHandle handle);
MXNET_DLL int MXKVStoreGetGroupSize(KVStoreHandle handle, int *ret);
MXNET_DLL int MXKVStoreGetRank(KVStoreHandle handle, int *ret);
MXNET_DLL int MXKVStoreGetType(KVStoreHandle handle, const char** type);
MXNET_DLL int MXKVStoreInit(KVStoreHandle handle, uint32_t num, const int* keys, NDArrayHandle*
    vals);
MXNET_DLL int MXKVStoreInitEx(KVStoreHandle handle, uint32_t num, const char** keys, NDArrayHandle*
    vals);
MXNET_DLL int MXKVStoreIsSchedulerNode(int *ret);
MXNET_DLL int MXKVStoreIsServerNode(int *ret);
MXNET_DLL int MXKVStoreIsWorkerNode(int *ret);
MXNET_DLL int MXKVStorePull(KVStoreHandle handle, uint32_t num, const int* keys, NDArrayHandle*
    vals, int priority);
MXNET_DLL int MXKVStorePullEx(KVStoreHandle handle, uint32_t num, const char** keys, NDArrayHandle*
    vals, int priority);
MXNET_DLL int MXKVStorePush(KVStoreHandle handle, uint32_t num, const int* keys, NDArrayHandle*
    vals, int priority);
MXNET_DLL int MXKVStorePushEx(KVStoreHandle handle, uint32_t num, const char** keys, NDArrayHandle*
    vals, int priority);
MXNET_DLL int MXKVStoreRunServer(KVStoreHandle handle, MXKVStoreServerController controller, void
    *controller_handle);
MXNET_DLL int MXKVStoreSendCommmandToServers(KVStoreHandle handle, int cmd_id, const char*
    cmd_body);
MXNET_DLL int MXKVStoreSetUpdater(KVStoreHandle handle, MXKVStoreUpdater updater, void
    *updater_handle);
MXNET_DLL int MXListDataIters(uint32_t *out_size, DataIterCreator **out_array);
MXNET_DLL int MXNDArrayCreate(const uint32_t *shape, uint32_t ndim, int dev_type, int dev_id, int
    delay_alloc, NDArrayHandle *out);
MXNET_DLL int MXNDArrayCreateEx(const uint32_t *shape, uint32_t ndim, int dev_type, int dev_id, int
    delay_alloc, int dtype, NDArrayHandle *out);
MXNET_DLL int MXNDArrayCreateNone(NDArrayHandle *out);
MXNET_DLL int MXNDArrayFree(NDArrayHandle handle);
MXNET_DLL int MXNDArrayGetContext(NDArrayHandle handle, int *out_dev_type, int *out_dev_id);
MXNET_DLL int MXNDArrayGetDType(NDArrayHandle handle, int *out_dtype);
MXNET_DLL int MXNDArrayGetData(NDArrayHandle handle, void **out_pdata);
MXNET_DLL int MXNDArrayGetShapeEx(NDArrayHandle handle, int *out_dim, const int **out_pdata);
MXNET_DLL int MXNDArrayLoad(const char* fname, uint32_t *out_size, NDArrayHandle** out_arr, uint32_t
    *out_name_size, const char*** out_names);
MXNET_DLL int MXNDArrayLoadFromBuffer(const void *ndarray_buffer, size_t size, uint32_t *out_size,
    NDArrayHandle** out_arr, uint32_t *out_name_size, const char*** out_names);
MXNET_DLL int MXNDArrayReshape(NDArrayHandle handle, int ndim, int *dims, NDArrayHandle *out);
MXNET_DLL int MXNDArraySave(const char* fname, uint32_t num_args, NDArrayHandle* args, const char**
    keys);
MXNET_DLL int MXNDArraySlice(NDArrayHandle handle, uint32_t slice_begin, uint32_t slice_end,
    NDArrayHandle *out);
MXNET_DLL int MXNDArraySyncCopyFromCPU(NDArrayHandle handle, const void *data, size_t size);
MXNET_DLL int MXNDArraySyncCopyToCPU(NDArrayHandle handle, void *data, size_t size);
MXNET_DLL int MXNDArrayWaitAll();
MXNET_DLL int MXNDArrayWaitToRead(NDArrayHandle handle);
MXNET_DLL int MXNDArrayWaitToWrite(NDArrayHandle handle);
MXNET_DLL int MXNotifyShutdown();
MXNET_DLL int MXRandomSeed(int seed);
MXNET_DLL int MXSymbolCompose(SymbolHandle sym, const char *name, uint32_t num_args, const char**
    keys, SymbolHandle* args);
MXNET_DLL int MXSymbolCopy(SymbolHandle symbol, SymbolHandle *out);
MXNET_DLL int MXSymbolCreateAtomicSymbol(AtomicSymbolCreator creator, uint32_t num_param, const char
    **keys, const char **vals, SymbolHandle *out);
MXNET_DLL int MXSymbolCreateFromFile(const char *fname, SymbolHandle *out);
MXNET_DLL int MXSymbolCreateFromJSON(const char *json, SymbolHandle *out);
MXNET_DLL int MXSymbolCreateGroup(uint32_t num_symbols, SymbolHandle *symbols, SymbolHandle *out);
MXNET_DLL int MXSymbolCreateVariable(const char *name, SymbolHandle *out);
MXNET_DLL int MXSymbolFree(SymbolHandle symbol);
MXNET_DLL int MXSymbolGetAtomicSymbolInfo(AtomicSymbolCreator creator, const char **name, const char
    **description, uint32_t *num_args, const char ***arg_names, const char ***arg_type_infos, const
    char ***arg_descriptions, const char **key_var_num_args, const char **return_type DEFAULT(NULL));
MXNET_DLL int MXSymbolGetInternals(SymbolHandle symbol, SymbolHandle *out);
MXNET_DLL int MXSymbolGetName(SymbolHandle symbol, const char** out, int *success);
MXNET_DLL int MXSymbolGetNumOutputs(SymbolHandle symbol, uint32_t *output_count);
MXNET_DLL int MXSymbolGetOutput(SymbolHandle symbol, uint32_t index, SymbolHandle *out);
MXNET_DLL int MXSymbolInferShapeEx(SymbolHandle sym, uint32_t num_args, const char** keys, const
    uint32_t *arg_ind_ptr, const int *arg_shape_data, uint32_t *in_shape_size, const int
    **in_shape_ndim, const int ***in_shape_data, uint32_t *out_shape_size, const int
    **out_shape_ndim, const int ***out_shape_data, uint32_t *aux_shape_size, const int
    **aux_shape_ndim, const int ***aux_shape_data, int *complete);
MXNET_DLL int MXSymbolListArguments(SymbolHandle symbol, uint32_t *out_size, const char
    ***out_str_array);
MXNET_DLL int MXSymbolListAtomicSymbolCreators(uint32_t *out_size, AtomicSymbolCreator **out_array);
MXNET_DLL int MXSymbolListAttrShallow(SymbolHandle symbol, uint32_t *out_size, const char*** out);
MXNET_DLL int MXSymbolListAuxiliaryStates(SymbolHandle symbol, uint32_t *out_size, const char
    ***out_str_array);
MXNET_DLL int MXSymbolListOutputs(SymbolHandle symbol, uint32_t *out_size, const char
    ***out_str_array);
MXNET_DLL int MXSymbolSaveToFile(SymbolHandle symbol, const char *fname);
MXNET_DLL int MXSymbolSaveToJSON(SymbolHandle symbol, const char **out_json);
MXNET_DLL int MXSymbolSetAttr(SymbolHandle symbol, const char* key, const char* value);

#ifdef __cplusplus
}
#endif

#endif /* MXNET_C_API_H_ */
