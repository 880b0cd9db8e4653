/* The part of NNVM's C API (nnvm/c_api.h) MXNet's cpp-package calls, implemented by
 * symbind's libmxnet.so. */
#ifndef NNVM_C_API_H_
#define NNVM_C_API_H_

#ifdef __cplusplus
extern "C" {
#endif

#ifndef NNVM_DLL
#define NNVM_DLL __attribute__((visibility("default")))
#endif

typedef unsigned int nn_uint;
typedef void* OpHandle;
typedef void* SymbolHandle;
typedef void* GraphHandle;

NNVM_DLL const char* NNGetLastError(void);
NNVM_DLL int NNListAllOpNames(nn_uint* out_size, const char*** out_array);
NNVM_DLL int NNGetOpHandle(const char* op_name, OpHandle* op_out);
/* option 0: every input; 1: arguments only; 2: auxiliary states only. */
NNVM_DLL int NNSymbolListInputNames(SymbolHandle symbol, int option, nn_uint* out_size,
                                    const char*** out_str_array);
NNVM_DLL int NNSymbolFree(SymbolHandle symbol);
NNVM_DLL int NNSymbolCompose(SymbolHandle sym, const char* name, nn_uint num_args, const char** keys,
                             SymbolHandle* args);

#ifdef __cplusplus
}
#endif

#endif /* NNVM_C_API_H_ */
