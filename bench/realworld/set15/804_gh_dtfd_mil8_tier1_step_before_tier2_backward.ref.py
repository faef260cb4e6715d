# reference fix for 804: the thread's fix, `optimizer0.step()` moved right before `optimizer1.step()` (after loss1.backward()).
import importlib
import os
import random
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
net = importlib.import_module("804helpers_dtfd_model")


class Params:
    batch_size = 1
    grad_clipping = 5
    device = "cpu"


def train_attention_preFeature_DTFD(mDATA_list, classifier, dimReduction, attention, UClassifier, optimizer0,
                                    optimizer1, ce_cri=None, params=None, numGroup=3, total_instance=3,
                                    distill='MaxMinS'):
    SlideNames_list, mFeat_list, Label_dict = mDATA_list
    classifier.train()
    dimReduction.train()
    attention.train()
    UClassifier.train()
    instance_per_group = total_instance // numGroup
    numSlides = len(SlideNames_list)
    numIter = numSlides // params.batch_size
    tIDX = list(range(numSlides))
    random.shuffle(tIDX)
    for idx in range(numIter):
        tidx_slide = tIDX[idx * params.batch_size:(idx + 1) * params.batch_size]
        tslide_name = [SlideNames_list[sst] for sst in tidx_slide]
        tlabel = [Label_dict[sst] for sst in tidx_slide]
        label_tensor = torch.LongTensor(tlabel).to(params.device)
        for tidx, (tslide, slide_idx) in enumerate(zip(tslide_name, tidx_slide)):
            tslideLabel = label_tensor[tidx].unsqueeze(0)
            slide_pseudo_feat = []
            slide_sub_preds = []
            slide_sub_labels = []
            tfeat_tensor = mFeat_list[slide_idx]
            tfeat_tensor = tfeat_tensor.to(params.device)
            feat_index = list(range(tfeat_tensor.shape[0]))
            random.shuffle(feat_index)
            index_chunk_list = torch.tensor_split(torch.tensor(feat_index), numGroup)  # np.array_split in the repo
            index_chunk_list = [sst.tolist() for sst in index_chunk_list]
            for tindex in index_chunk_list:
                slide_sub_labels.append(tslideLabel)
                subFeat_tensor = torch.index_select(tfeat_tensor, dim=0,
                                                    index=torch.LongTensor(tindex).to(params.device))
                tmidFeat = dimReduction(subFeat_tensor)
                tAA = attention(tmidFeat).squeeze(0)
                tattFeats = torch.einsum('ns,n->ns', tmidFeat, tAA)  ### n x fs
                tattFeat_tensor = torch.sum(tattFeats, dim=0).unsqueeze(0)  ## 1 x fs
                tPredict = classifier(tattFeat_tensor)  ### 1 x 2
                slide_sub_preds.append(tPredict)
                patch_pred_logits = net.get_cam_1d(classifier, tattFeats.unsqueeze(0)).squeeze(0)  ###  cls x n
                patch_pred_logits = torch.transpose(patch_pred_logits, 0, 1)  ## n x cls
                patch_pred_softmax = torch.softmax(patch_pred_logits, dim=1)  ## n x cls
                _, sort_idx = torch.sort(patch_pred_softmax[:, -1], descending=True)
                topk_idx_max = sort_idx[:instance_per_group].long()
                topk_idx_min = sort_idx[-instance_per_group:].long()
                topk_idx = torch.cat([topk_idx_max, topk_idx_min], dim=0)
                MaxMin_inst_feat = tmidFeat.index_select(dim=0, index=topk_idx)
                max_inst_feat = tmidFeat.index_select(dim=0, index=topk_idx_max)
                af_inst_feat = tattFeat_tensor
                if distill == 'MaxMinS':
                    slide_pseudo_feat.append(MaxMin_inst_feat)
                elif distill == 'MaxS':
                    slide_pseudo_feat.append(max_inst_feat)
                elif distill == 'AFS':
                    slide_pseudo_feat.append(af_inst_feat)
            slide_pseudo_feat = torch.cat(slide_pseudo_feat, dim=0)  ### numGroup x fs

            ## optimization for the first tier
            slide_sub_preds = torch.cat(slide_sub_preds, dim=0)  ### numGroup x fs
            slide_sub_labels = torch.cat(slide_sub_labels, dim=0)  ### numGroup
            loss0 = ce_cri(slide_sub_preds, slide_sub_labels).mean()
            optimizer0.zero_grad()
            loss0.backward(retain_graph=True)
            torch.nn.utils.clip_grad_norm_(dimReduction.parameters(), params.grad_clipping)
            torch.nn.utils.clip_grad_norm_(attention.parameters(), params.grad_clipping)
            torch.nn.utils.clip_grad_norm_(classifier.parameters(), params.grad_clipping)

            ## optimization for the second tier
            gSlidePred = UClassifier(slide_pseudo_feat)
            loss1 = ce_cri(gSlidePred, tslideLabel).mean()
            optimizer1.zero_grad()
            loss1.backward()
            torch.nn.utils.clip_grad_norm_(UClassifier.parameters(), params.grad_clipping)
            optimizer0.step()
            optimizer1.step()


def compute():
    torch.manual_seed(32)
    random.seed(32)
    params = Params()
    in_chn, mDim = 16, 8
    classifier = net.Classifier_1fc(mDim, 2, 0)
    attention = net.Attention_Gated(mDim)
    dimReduction = net.DimReduction(in_chn, mDim)
    attCls = net.Attention_with_Classifier(L=mDim, num_cls=2, droprate=0)
    ce_cri = torch.nn.CrossEntropyLoss(reduction='none')
    trainable_parameters = []
    trainable_parameters += list(classifier.parameters())
    trainable_parameters += list(attention.parameters())
    trainable_parameters += list(dimReduction.parameters())
    optimizer_adam0 = torch.optim.Adam(trainable_parameters, lr=1e-3, weight_decay=1e-4)
    optimizer_adam1 = torch.optim.Adam(attCls.parameters(), lr=1e-3, weight_decay=1e-4)
    names = ["tumor_001", "normal_001", "tumor_002"]
    feats = [torch.randn(12, in_chn) for _ in names]
    labels = [1, 0, 1]
    train_attention_preFeature_DTFD((names, feats, labels), classifier, dimReduction, attention, attCls,
                                    optimizer_adam0, optimizer_adam1, ce_cri=ce_cri, params=params,
                                    numGroup=3, total_instance=3, distill='AFS')
    out = {}
    for tag, m in [("classifier", classifier), ("attention", attention), ("dimReduction", dimReduction),
                   ("attCls", attCls)]:
        out.update({tag + "." + n: p.detach().clone() for n, p in m.named_parameters()})
    return out


if __name__ == "__main__":
    compute()
